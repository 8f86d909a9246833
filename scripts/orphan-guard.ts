// Ends `npm start`'s children when it dies, however it dies. Started by scripts/start.ts
// with a pipe on stdin and the children's process group ids as arguments: the kernel
// closes the pipe when start.ts exits, even by SIGKILL, so the end of stdin is the
// signal. It then sends SIGTERM to each group, and SIGKILL 5 s later to what is left.
// Usage: node scripts/orphan-guard.ts <pgid>...
const groups = process.argv
  .slice(2)
  .map(Number)
  .filter((pgid) => Number.isInteger(pgid) && pgid > 1);

function signal(name: NodeJS.Signals | 0): boolean {
  let alive = false;
  for (const pgid of groups) {
    try {
      process.kill(-pgid, name);
      alive = true;
    } catch {}
  }
  return alive;
}

process.stdin.resume();
process.stdin.on("close", () => {
  if (!signal("SIGTERM")) process.exit(0);
  const poll = setInterval(() => {
    // Signal 0 only asks whether any member of the group is still there.
    if (!signal(0)) process.exit(0);
  }, 200);
  setTimeout(() => {
    clearInterval(poll);
    signal("SIGKILL");
    process.exit(0);
  }, 5000);
});
