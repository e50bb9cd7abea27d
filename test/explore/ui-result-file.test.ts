/**
 * Which file given to `mcptap ui` a `--replay` or `--check` result is of: the same path first, then
 * the one file of the same name; a guess (several of that name, or none) is said, for a warning.
 */
import { describe, expect, it } from 'vitest';
import { matchResultFile } from '../../src/explore/ui-api.js';

describe('matchResultFile', () => {
  it('the same path wins over an earlier file of the same name, and is no doubt', () => {
    expect(matchResultFile(['a/x.db', 'b/x.db'], 'b/x.db')).toEqual({ index: 1 });
    expect(matchResultFile(['a/x.db', 'b/./x.db'], 'b/x.db')).toEqual({ index: 1 });
  });

  it('the one file of that name, moved since: no doubt', () => {
    expect(matchResultFile(['demo.db', 'copies/tap.db'], '/ci/tap.db')).toEqual({ index: 1 });
  });

  it('several of that name, or none: the first, with a doubt to warn of', () => {
    expect(matchResultFile(['a/x.db', 'b/x.db'], 'c/x.db')).toEqual({ index: 0, doubt: 'several files given are named x.db; shown beside a/x.db' });
    expect(matchResultFile(['demo.db'], 'evil.db')).toEqual({ index: 0, doubt: 'none of the files given is evil.db; shown beside demo.db' });
  });
});
