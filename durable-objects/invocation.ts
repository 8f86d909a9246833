import { DurableObject } from "cloudflare:workers";

export class InvocationDO extends DurableObject {}
