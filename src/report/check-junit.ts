/**
 * `mcptap check --junit`: a testsuite per rule family and a testcase per finding. Only findings the
 * `--fail-on` verdict counts are `<failure>`s (JUnit agrees with the exit code); the others pass with
 * their message in `<system-out>`. An enabled rule that found nothing passes once; one that could not
 * be judged (no --baseline) is `<skipped>`. Names are stable: `ruleId` as classname, the place as name.
 */
import { detailText, isFailing, placeText, type CheckReportInput } from './check-view.js';
import { xmlText } from './format.js';

/** One JUnit document; with several recordings checked, each suite's name says its recording. */
export function renderCheckJunit(inputs: readonly CheckReportInput[]): string {
  const file = inputs[0]?.file ?? '';
  const failing = inputs.reduce((n, i) => n + i.failing, 0);
  const suites = inputs.flatMap((input) => junitSuites(input, inputs.length > 1 ? `recording ${input.recordingId} ` : ''));
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="mcptap check ${xmlText(file)}" failures="${failing}">\n${suites.join('\n')}\n</testsuites>\n`;
}

function junitSuites(input: CheckReportInput, prefix: string): string[] {
  const { result } = input;
  const families = [...new Set(result.rules.map((r) => r.family))];
  let keptFailing = 0;
  const suites = families.map((family) => {
    const cases: string[] = [];
    let failures = 0;
    let skipped = 0;
    for (const rule of result.rules.filter((r) => r.family === family)) {
      const found = result.findings.filter((f) => f.ruleId === rule.id);
      const unjudged = result.unjudged[rule.id];
      if (unjudged !== undefined && rule.enabled) {
        skipped++;
        cases.push(
          `    <testcase classname="${xmlText(rule.id)}" name="${xmlText(`${rule.id}: not judged`)}">\n      <skipped message="${xmlText(unjudged)}"/>\n    </testcase>`,
        );
      } else if (found.length === 0 && !result.counts[rule.id] && rule.enabled) {
        cases.push(`    <testcase classname="${xmlText(rule.id)}" name="${xmlText(`${rule.id}: no findings`)}"/>`);
      }
      found.forEach((f, i) => {
        const name = `${rule.id} #${i + 1}${placeText(f) ? ` ${placeText(f)}` : ''}`;
        const text = xmlText([`${f.severity}: ${f.message}`, detailText(f)].filter(Boolean).join('\n'));
        if (!isFailing(input, f)) {
          cases.push(`    <testcase classname="${xmlText(rule.id)}" name="${xmlText(name)}">\n      <system-out>${text}</system-out>\n    </testcase>`);
          return;
        }
        failures++;
        cases.push(
          `    <testcase classname="${xmlText(rule.id)}" name="${xmlText(name)}">\n` +
            `      <failure type="${f.severity}" message="${xmlText(f.message)}">${xmlText([f.message, detailText(f)].filter(Boolean).join('\n'))}</failure>\n` +
            `    </testcase>`,
        );
      });
    }
    keptFailing += failures;
    return `  <testsuite name="${xmlText(prefix + family)}" tests="${cases.length}" failures="${failures}" errors="0" skipped="${skipped}">\n${cases.join('\n')}\n  </testsuite>`;
  });
  if (result.omitted > 0) {
    // Over the cap: a failure only when some of the failing findings are among those not kept.
    const failing = input.failing > keptFailing;
    const what = `${result.omitted} more findings over the cap were counted but not listed`;
    suites.push(
      `  <testsuite name="${xmlText(`${prefix}omitted`)}" tests="1" failures="${failing ? 1 : 0}" errors="0" skipped="0">\n    <testcase classname="mcptap.check" name="${result.omitted} more findings">\n` +
        (failing ? `      <failure type="omitted" message="${what}"/>\n` : `      <system-out>${what}</system-out>\n`) +
        `    </testcase>\n  </testsuite>`,
    );
  }
  return suites;
}
