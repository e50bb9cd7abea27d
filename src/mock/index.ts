/** The mock server (`mcptap mock`): a recording served as an MCP server, on stdio or Streamable HTTP. */
export { readRecordedAnswers, type RecordedAnswer, type RecordedAnswers, type RecordedMessage } from './recorded-answers.js';
export {
  MockResponder,
  MOCK_MISS_CODE,
  PACES,
  describeStats,
  type Pace,
  type Plan,
  type PlannedMessage,
  type MockStats,
  type MockResponderOptions,
} from './mock-responder.js';
export { serveMockStdio, type MockStdioOptions } from './mock-stdio.js';
export { startMockHttpServer, type MockHttpServer, type MockHttpServerOptions } from './mock-http-server.js';
export { HttpMissForwarder, MOCK_UPSTREAM_ERROR_CODE, type MissForwarder, type ForwardOptions } from './miss-forwarder.js';
export { MockMatcher, requestKey, describeMiss, type MockCandidate, type MatchResult, type Nearest } from '../replay/mock-matcher.js';
