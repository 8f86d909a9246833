/**
 * The Toolwire client for browsers and Node 22: follow an invocation live
 * (`subscribe`), call the HTTP API (`ToolwireClient`), and the small pieces a view
 * needs (ANSI spans, truncation words, new-text tracking for terminals), and the lane
 * fold (`reduceLaneSnapshot`) for views of many invocations of one run.
 */

export type { JsonValue, Op } from "../core/chord/types.ts";
export type { LaneTool, LaneView } from "../core/events/index.ts";
export { createLaneView, reduceLaneSnapshot } from "../core/events/index.ts";
export type {
  HarnessEvent,
  ToolEndEvent,
  ToolStartEvent,
  ToolUpdateEvent,
} from "../core/events/types.ts";
export { formatCount } from "../core/output/footer.ts";
export type {
  ImageContent,
  OutputContent,
  ProducerEnd,
  SettledResult,
  TextContent,
  ToolOutputState,
  Truncation,
  Usage,
} from "../core/output/types.ts";
export { type AnsiLine, type AnsiSpan, type AnsiStyle, parseAnsi, stripAnsi } from "./ansi.ts";
export { type BackoffPolicy, backoffDelay, DEFAULT_BACKOFF } from "./backoff.ts";
export { type InvocationAddress, type StreamKind, streamUrl } from "./endpoints.ts";
export {
  type ApiErrorCode,
  type ClientErrorCode,
  ToolwireError,
  type ToolwireErrorCode,
} from "./errors.ts";
export {
  type CreatedInvocation,
  type CreateInvocationRequest,
  type InvocationInfo,
  type ProducerCall,
  type ResultPoll,
  type ToolInfo,
  ToolwireClient,
  type ToolwireClientOptions,
} from "./http-client.ts";
export { InvocationReplica, type ReplicaOutcome } from "./invocation-replica.ts";
export { DEFAULT_KEEP_ALIVE, type KeepAlivePolicy } from "./keep-alive.ts";
export { type FollowStep, OutputFollower } from "./output-follower.ts";
export { OutputProducer, type OutputProducerOptions } from "./output-producer.ts";
export { type SocketFactory, type SocketLike, socketTransport } from "./socket-transport.ts";
export { sseTransport } from "./sse-transport.ts";
export {
  type SubscribeOptions,
  type Subscription,
  type SubscriptionOutcome,
  type SubscriptionStatus,
  subscribe,
} from "./subscription.ts";
export type {
  ResumePoint,
  Transport,
  TransportConnection,
  TransportHandlers,
} from "./transport.ts";
export { describeTruncation, formatBytes } from "./truncation-notice.ts";
