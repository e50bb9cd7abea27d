/** The raw MCP client (both eras, HTTP and stdio): the public surface used by load, replay and demo. */
export type { CallResult, CallTiming, ViolationKind } from './call-result.js';
export { McpHttpClient, type McpHttpClientOptions, type PostOptions } from './http-client.js';
export { McpStdioClient, type StdioClientOptions, type StdioRequestOptions } from './stdio-client.js';
export { HttpChannel, StdioChannel, type McpChannel, type ChannelRequestOptions } from './mcp-channel.js';
export { McpSession, numericIds, type IdSource, type McpSessionOptions } from './mcp-session.js';
export { detectEra, classifyProbe, type EraProbe } from './detect-era.js';
export {
  applyHeaderOverrides,
  encodeHeaderValue,
  mcpHeaders,
  withModernMeta,
  DEFAULT_CLIENT_INFO,
  type ClientInfo,
  type HeaderContext,
  type ModernMetaOptions,
} from './mcp-request.js';
export { TransportError, classifyNetworkError, toTransportError, TRANSPORT_ERROR_CLASSES, type TransportErrorClass } from './transport-error.js';
