export { AdaptivePublisher, type AdaptivePublisherOptions } from "./adaptive-publisher.ts";
export { type Clock, systemClock } from "./clock.ts";
