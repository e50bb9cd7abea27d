/**
 * `mcptap check --junit`: a testsuite per rule family, a failing testcase per finding, and one passing
 * testcase per enabled rule that found nothing. Names are stable: `ruleId` as classname, the place as name.
 */
import { detailText, findingTotal, placeText, type CheckReportInput } from './check-view.js';
import { xmlText } from './format.js';

export function renderCheckJunit(input: CheckReportInput): string {
  const { result } = input;
  const families = [...new Set(result.rules.map((r) => r.family))];
  const suites = families.map((family) => {
    const cases: string[] = [];
    let failures = 0;
    for (const rule of result.rules.filter((r) => r.family === family)) {
      const found = result.findings.filter((f) => f.ruleId === rule.id);
      if (found.length === 0 && !result.counts[rule.id] && rule.enabled) {
        cases.push(`    <testcase classname="${xmlText(rule.id)}" name="${xmlText(`${rule.id}: no findings`)}"/>`);
      }
      found.forEach((f, i) => {
        failures++;
        const name = `${rule.id} #${i + 1}${placeText(f) ? ` ${placeText(f)}` : ''}`;
        cases.push(
          `    <testcase classname="${xmlText(rule.id)}" name="${xmlText(name)}">\n` +
            `      <failure type="${f.severity}" message="${xmlText(f.message)}">${xmlText([f.message, detailText(f)].filter(Boolean).join('\n'))}</failure>\n` +
            `    </testcase>`,
        );
      });
    }
    return `  <testsuite name="${family}" tests="${cases.length}" failures="${failures}" errors="0" skipped="0">\n${cases.join('\n')}\n  </testsuite>`;
  });
  if (result.omitted > 0) {
    suites.push(
      `  <testsuite name="omitted" tests="1" failures="1" errors="0" skipped="0">\n    <testcase classname="mcptap.check" name="${result.omitted} more findings">\n` +
        `      <failure type="omitted" message="${result.omitted} more findings over the cap were counted but not listed"/>\n    </testcase>\n  </testsuite>`,
    );
  }
  const total = findingTotal(result);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="mcptap check ${xmlText(input.file)}" failures="${total}">\n${suites.join('\n')}\n</testsuites>\n`;
}
