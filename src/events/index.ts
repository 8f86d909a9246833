export { createLaneView, reduceLaneSnapshot } from "./lane.ts";
export type * from "./types.ts";
