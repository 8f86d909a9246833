#!/usr/bin/env python3
"""Follow a Toolwire call's output as a Durable Stream, with the standard library only.

Reads GET <url> from offset -1 (or --offset), catch-up then long-poll, writes every byte
to stdout exactly once, and stops when the stream says Stream-Closed. A dropped
connection is retried from the last Stream-Next-Offset, so nothing is lost or repeated.

    python3 docs/stream-reader.py "$U/v1/invocations/call_42/stream" --token="$API_TOKEN"
    python3 docs/stream-reader.py "$U/v1/invocations/call_42/stream?token=<subscribe token>"

Prints the last offset to stderr at the end; pass it as --offset to resume later.
"""
import argparse
import http.client
import sys
import time
import urllib.error
import urllib.parse
import urllib.request


def with_query(url, **params):
    parts = urllib.parse.urlsplit(url)
    query = dict(urllib.parse.parse_qsl(parts.query))
    query.update(params)
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


def follow(url, token=None, offset="-1", out=sys.stdout.buffer, retries=20):
    """Writes the stream's bytes from `offset` to `out`; answers the final offset."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    failures = 0
    while True:
        # Catch up without waiting; once up to date, wait for more with long-poll.
        request = urllib.request.Request(
            with_query(url, offset=offset, live="long-poll"), headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                body = answer.read()
                status = answer.status
                next_offset = answer.headers.get("Stream-Next-Offset")
                closed = answer.headers.get("Stream-Closed") == "true"
        except urllib.error.HTTPError as refused:
            raise SystemExit(f"{refused.code}: {refused.read().decode(errors='replace')}")
        except (urllib.error.URLError, http.client.HTTPException, OSError) as dropped:
            failures += 1
            if failures > retries:
                raise SystemExit(f"gave up after {retries} dropped connections: {dropped}")
            time.sleep(min(2.0, 0.1 * failures))
            continue
        failures = 0
        if status == 200 and body:
            out.write(body)
            out.flush()
        if next_offset:
            offset = next_offset
        if closed:
            return offset


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="the stream's URL, e.g. $U/v1/invocations/<id>/stream")
    parser.add_argument(
        "--token",
        help="the API token (or put ?token= in the URL); write --token=TOKEN, since a token may start with '-'",
    )
    parser.add_argument("--offset", default="-1", help="where to start (default: -1, the start)")
    args = parser.parse_args()
    last = follow(args.url, args.token, args.offset)
    print(f"offset {last}", file=sys.stderr)


if __name__ == "__main__":
    main()
