/**
 * Era probe, as the 2026-07-28 spec tells clients to do it: send `server/discover`; a
 * DiscoverResult, or an error only a modern server gives (UnsupportedProtocolVersion with its
 * `supported` list, HeaderMismatch), means modern; anything else (method not found, HTTP 400/404
 * for a missing session, ...) means the server speaks the legacy era.
 */
import { isRecord } from '../model/jsonrpc.js';
import { canonicalErrorCode, ErrorCodes } from '../protocol/error-codes.js';
import { MODERN_PROTOCOL_VERSION } from '../protocol/mcp.js';
import type { CallResult } from './call-result.js';
import type { McpChannel } from './mcp-channel.js';
import { McpSession, type McpSessionOptions } from './mcp-session.js';

export interface EraProbe {
  era: 'legacy' | 'modern';
  /** Modern: the version to use (ours when the server supports it, else its first supported one). */
  protocolVersion?: string;
  supportedVersions?: string[];
  /** The discover exchange itself (for the caller to record). */
  probe: CallResult;
}

export async function detectEra(channel: McpChannel, opts: Omit<McpSessionOptions, 'era'> = {}): Promise<EraProbe> {
  const session = new McpSession(channel, { ...opts, era: 'modern' });
  const probe = await session.request('server/discover', {});
  return { ...classifyProbe(probe, opts.protocolVersion ?? MODERN_PROTOCOL_VERSION), probe };
}

export function classifyProbe(probe: CallResult, wanted: string): Omit<EraProbe, 'probe'> {
  const res = probe.response;
  const result = res?.result;
  if (isRecord(result) && Array.isArray(result.supportedVersions)) {
    const supported = result.supportedVersions.filter((v): v is string => typeof v === 'string');
    return { era: 'modern', supportedVersions: supported, protocolVersion: supported.includes(wanted) ? wanted : supported[0] };
  }
  const err = res?.error;
  if (err) {
    const code = canonicalErrorCode(err.code);
    const data = isRecord(err.data) ? err.data : {};
    if (code === ErrorCodes.UnsupportedProtocolVersion && Array.isArray(data.supported)) {
      const supported = data.supported.filter((v): v is string => typeof v === 'string');
      const modern = supported.filter((v) => v >= MODERN_PROTOCOL_VERSION);
      if (modern.length > 0) return { era: 'modern', supportedVersions: supported, protocolVersion: modern[0] };
      return { era: 'legacy', supportedVersions: supported };
    }
  }
  return { era: 'legacy' };
}
