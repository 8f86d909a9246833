// Starts the real processes end-to-end tests need (sandbox host, wrangler dev).
// Filled in with the sandbox host; until then there is nothing to start.
export default function setup(): void {}
