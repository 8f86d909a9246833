/**
 * Error pages for people: a browser that opens a viewer or run link (`/view/:id`,
 * `/run/:runId`) and is refused gets a small HTML page that says what happened and what
 * to do, with the API's status. Everything else, and any client that does not ask for
 * HTML first, keeps the JSON error (docs/decisions/152).
 */
import type { ApiError } from "../protocol/index.ts";
import type { TokenProblem } from "./auth.ts";

/** What a page link names: one call's viewer, one run's page, or a sandbox's port (a preview URL). */
type PageSubject =
  | { kind: "view"; id: string }
  | { kind: "run"; runId: string }
  | { kind: "preview"; port: number | null };

/**
 * The page a path is a link to, or null for an API path.
 * @example pageSubject("/view/call_1") // { kind: "view", id: "call_1" }
 */
export function pageSubject(path: string): PageSubject | null {
  const match = /^\/(view|run)(?:\/(.*?))?\/?$/.exec(path);
  if (!match) return null;
  const name = safeDecode(match[2] ?? "");
  return match[1] === "view" ? { kind: "view", id: name } : { kind: "run", runId: name };
}

/**
 * Whether the request asks for HTML before JSON: what a browser's navigation sends
 * (`text/html,…`), and what `fetch`, curl and the SDKs (`*∕*`, `application/json`) do not.
 */
export function prefersHtml(req: Request): boolean {
  const accept = req.headers.get("Accept") ?? "";
  const html = accept.indexOf("text/html");
  const json = accept.indexOf("application/json");
  return html !== -1 && (json === -1 || html < json);
}

/**
 * The HTML answer for `error` on the page `subject` names; `problem` is why a token was
 * refused, when that was the error.
 * @example return errorPage(subject, err.error, "expired")
 */
export function errorPage(
  subject: PageSubject,
  error: ApiError,
  problem: TokenProblem | null,
): Response {
  const { title, advice } = explain(subject, error, problem);
  const body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Toolwire</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;margin:0;padding:2rem 1rem;background:#0f1115;color:#e6e6e6}
main{max-width:36rem;margin:0 auto}
h1{font-size:1.4rem;margin:0 0 .75rem}
p{margin:.5rem 0}
code{background:#1d2129;padding:.1rem .3rem;border-radius:3px;font-size:.95em;word-break:break-all}
.detail{color:#9aa3b2;font-size:.875rem;margin-top:1.5rem}
</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${advice.map((line) => `<p>${line}</p>`).join("\n")}
<p class="detail">For developers, what the API answers: ${escapeHtml(`${error.status} ${error.code}: ${error.message}`)}</p>
</main>
</body>
</html>
`;
  return new Response(body, {
    status: error.status,
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "Referrer-Policy": "no-referrer",
      // No scripts, no outside resources, no framing: the page is its own text.
      "Content-Security-Policy":
        "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      "X-Frame-Options": "DENY",
    },
  });
}

/** Title and advice (HTML, names escaped) for one refusal. */
function explain(
  subject: PageSubject,
  error: ApiError,
  problem: TokenProblem | null,
): { title: string; advice: string[] } {
  if (subject.kind === "preview") return explainPreview(subject.port, error);
  const what = subject.kind === "view" ? "call" : "run";
  const name = subject.kind === "view" ? subject.id : subject.runId;
  const shown = `<code>${escapeHtml(name)}</code>`;
  // A token for another subject means the name in the address is wrong: do not repeat it.
  const named = problem === "other_invocation" ? "" : name;
  const command =
    subject.kind === "view"
      ? `<code>toolwire link ${escapeHtml(shellWord(named || "<id>"))}</code>`
      : `<code>toolwire link --run ${escapeHtml(shellWord(named || "<runId>"))}</code>`;
  const askAgain = `Ask for a new one with ${command}, or from your agent.`;
  switch (problem) {
    case "expired":
      return {
        title: "This link has expired",
        advice: [`Links to a ${what} last an hour, and this one is older.`, askAgain],
      };
    case "missing":
      return {
        title: "This link is incomplete",
        advice: [
          "It has no <code>?token=</code> part, which is what lets you read it. Copy the whole link again.",
          askAgain,
        ],
      };
    case "malformed":
    case "bad_signature":
      return {
        title: "This link is damaged",
        advice: [
          "Its token was cut short, changed, or issued by another Toolwire server. Copy the whole link again.",
          askAgain,
        ],
      };
    case "other_invocation":
      return {
        title: `This link is for another ${what}`,
        advice: [
          `Its token does not open ${shown}: the ${what} id in the address may be mistyped. Check the address against the link you were given.`,
          askAgain,
        ],
      };
    case null:
      break;
  }
  if (error.code === "not_found") {
    return {
      title: `No ${what} ${name ? "with this id" : "named in this link"}`,
      advice: [
        name
          ? `There is no ${what} ${shown} here: it was never created, or it was deleted after its retention period.`
          : `The address names no ${what}; a link looks like <code>/${subject.kind}/&lt;id&gt;?token=…</code>.`,
        "Check the address against the link you were given, or ask your agent for a new one.",
      ],
    };
  }
  if (error.code === "bad_request") {
    return {
      title: `This is not a ${what} id`,
      advice: [
        `${shown} is not a valid ${what} id, so the address was probably changed. Copy the whole link again.`,
      ],
    };
  }
  return {
    title: "This page cannot be shown right now",
    advice: [
      "The server could not answer this link. Try again in a minute; if it keeps failing, tell whoever runs this Toolwire.",
    ],
  };
}

/** Title and advice for a refused preview URL (decision 182). */
function explainPreview(port: number | null, error: ApiError): { title: string; advice: string[] } {
  const askAgain = `Ask your agent to share it again, or run <code>toolwire sandbox expose &lt;sandbox&gt; ${port ?? "&lt;port&gt;"}</code>.`;
  const said = `<code>${escapeHtml(error.message)}</code>`;
  switch (error.code) {
    case "gone":
      return { title: "This preview link has ended", advice: [said, askAgain] };
    case "not_found":
      return {
        title: "No preview at this address",
        advice: ["The link was cut short or changed. Copy the whole link again.", askAgain],
      };
    case "no_listener":
      return {
        title: "Nothing is answering on this port",
        advice: [
          `The sandbox is there, but no server listens on port ${port ?? "?"} in it: it has not started yet, or it stopped.`,
          "Start it again in the sandbox and reload this page.",
        ],
      };
    default:
      return {
        title: "This preview cannot be shown right now",
        advice: [said, "Try again in a minute."],
      };
  }
}

/** `text` quoted for a shell when it is more than letters, digits and `._-`. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9._<>-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
