export { type EventHeader, eventHeader } from "./header.ts";
export { createLaneView, reduceLaneSnapshot } from "./lane.ts";
export type * from "./types.ts";
