/** A scenario's `clientCapabilities`: validated, and preferred to the recorded ones of `from:` (client-side.ts). */
import { describe, expect, it } from 'vitest';
import { McptapError } from '../../src/errors.js';
import { clientSide } from '../../src/load/run/client-side.js';
import type { StoredExchange } from '../../src/store/types.js';
import { scenario } from './scenario-fixtures.js';

const TAIL = `target: { url: "http://127.0.0.1:1/mcp" }\nphases: [ { open: { rate: 10, duration: 1s } } ]\nsteps: [ { tool: echo } ]\n`;

/** A recorded roots/list the client answered with `roots`. */
function rootsAnswer(roots: unknown[]): StoredExchange {
  return { direction: 's2c', method: 'roots/list', startUs: 1, response: { jsonrpc: '2.0', id: 0, result: { roots } } } as unknown as StoredExchange;
}

describe('clientCapabilities', () => {
  it('is taken as declared, and refused when it is not an object', () => {
    expect(scenario(`clientCapabilities: { roots: { listChanged: true } }\n${TAIL}`, 'ok.yaml').clientCapabilities).toEqual({ roots: { listChanged: true } });
    expect(scenario(TAIL, 'none.yaml').clientCapabilities).toBeUndefined();
    expect(() => scenario(`clientCapabilities: [roots]\n${TAIL}`, 'bad.yaml')).toThrow(McptapError);
    expect(() => scenario(`clientCapabilities: [roots]\n${TAIL}`, 'bad.yaml')).toThrow(/clientCapabilities: must be an object of capabilities/);
  });

  it('declared wins over recorded; none at all declares nothing', () => {
    const recorded = { clientCapabilities: { roots: {} }, serverRequests: [rootsAnswer([{ uri: 'file:///r' }])] };
    expect(clientSide(undefined, recorded)!.capabilities).toEqual({ roots: {} });
    expect(clientSide({ sampling: {} }, recorded)!.capabilities).toEqual({ sampling: {} });
    expect(clientSide({}, recorded)).toBeUndefined();
    expect(clientSide(undefined, { serverRequests: [] })).toBeUndefined();
  });

  it("answers the server's requests with the recorded answers, else roots/list with no roots and others with -32601", () => {
    const req = (method: string) => ({ jsonrpc: '2.0' as const, id: 7, method });
    const recorded = clientSide(undefined, { clientCapabilities: { roots: {} }, serverRequests: [rootsAnswer([{ uri: 'file:///r' }])] })!;
    expect(recorded.answer(req('roots/list'))).toEqual({ jsonrpc: '2.0', id: 7, result: { roots: [{ uri: 'file:///r' }] } });
    const declared = clientSide({ roots: {} })!;
    expect(declared.answer(req('roots/list'))).toEqual({ jsonrpc: '2.0', id: 7, result: { roots: [] } });
    expect(declared.answer(req('sampling/createMessage')).error?.code).toBe(-32601);
    expect(declared.answer(req('ping'))).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
  });
});
