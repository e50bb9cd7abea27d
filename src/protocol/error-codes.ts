/** JSON-RPC and MCP error codes, both eras, with the pre-GA aliases of the 2026-07-28 codes. */
export const ErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ResourceNotFound: -32002,
  UrlElicitationRequired: -32042,
  HeaderMismatch: -32020,
  MissingRequiredClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
} as const;

/** Pre-GA SDKs used these for the three 2026-07-28 codes. */
const PRE_GA_ALIASES: Record<number, number> = { [-32001]: -32020, [-32003]: -32021, [-32004]: -32022 };

const NAMES: Record<number, string> = Object.fromEntries(Object.entries(ErrorCodes).map(([k, v]) => [v, k]));

/** A readable name for a code, e.g. `MethodNotFound`, or undefined when the code is not a known one. */
export function errorCodeName(code: number): string | undefined {
  return NAMES[code] ?? (PRE_GA_ALIASES[code] !== undefined ? NAMES[PRE_GA_ALIASES[code]!] : undefined);
}

/** Map a pre-GA alias onto the GA code; other codes pass through. */
export function canonicalErrorCode(code: number): number {
  return PRE_GA_ALIASES[code] ?? code;
}
