/** Error kinds to exit codes: a failure of mcptap's own never exits 1, which means "found something". */
import { describe, expect, it } from 'vitest';
import { ExitCode, exitCodeFor } from '../../src/cli/exit-codes.js';
import { ERROR_CODES, McptapError, type McptapErrorCode } from '../../src/errors.js';

const exitOf = (code: McptapErrorCode) => exitCodeFor(new McptapError(code, 'x'));

describe('exitCodeFor', () => {
  it('maps each kind to its own exit code', () => {
    expect(exitOf('MCPTAP_BAD_FLAG')).toBe(ExitCode.Usage);
    expect(exitOf('MCPTAP_LOAD_SCENARIO_INVALID')).toBe(ExitCode.InvalidInput);
    expect(exitOf('MCPTAP_LOAD_TARGET_REFUSED')).toBe(ExitCode.TargetUnavailable);
    expect(exitOf('MCPTAP_INDEXER')).toBe(ExitCode.Internal);
    expect(exitOf('MCPTAP_SPOOL_FAILED')).toBe(ExitCode.Internal);
  });

  it('gives an error that is not ours the internal exit code', () => {
    expect(exitCodeFor(new Error('a bug'))).toBe(ExitCode.Internal);
    expect(exitCodeFor('thrown string')).toBe(ExitCode.Internal);
  });

  it('never lets a coded error exit 0 or 1 (ok, findings)', () => {
    const codes = Object.keys(ERROR_CODES) as McptapErrorCode[];
    const reads = codes.filter((c) => [ExitCode.Ok, ExitCode.Failed].includes(exitOf(c) as 0 | 1));
    expect(reads).toEqual([]);
    expect(new Set(codes.map(exitOf))).toEqual(new Set([ExitCode.Usage, ExitCode.InvalidInput, ExitCode.TargetUnavailable, ExitCode.Internal]));
  });
});
