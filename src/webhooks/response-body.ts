import type { Readable } from "node:stream";

/** The event log keeps this much of a receiver's answer (bytes); the rest is read no further. */
export const MAX_RESPONSE_BODY_BYTES = 4096;

export interface ResponseBody {
  /** The first MAX_RESPONSE_BODY_BYTES as UTF-8 text (a character cut at the end is dropped; NUL is replaced). */
  readonly text: string;
  /** The answer was longer than what is kept. */
  readonly truncated: boolean;
}

/**
 * Reads at most `max` bytes of a response body and one more to know it was longer, then destroys the stream: a large
 * or endless answer costs at most one chunk beyond the limit, never its whole length. The request's abort signal
 * covers this read (the stream errors), so a receiver that trickles its body is cut at the delivery timeout.
 * Stream events, not `for await`: this runs once per delivery, and the async iterator costs more per chunk.
 */
export function readBounded(body: Readable, max: number = MAX_RESPONSE_BODY_BYTES): Promise<ResponseBody> {
  return new Promise<ResponseBody>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const done = (truncated: boolean) => {
      body.removeAllListeners("data");
      resolve({ text: textOf(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length), truncated), truncated });
    };
    body.on("data", (chunk: Buffer) => {
      const room = max - length;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        length = max;
        body.destroy();
        done(true);
        return;
      }
      chunks.push(chunk);
      length += chunk.length;
    });
    body.once("end", () => done(false));
    // Kept for the stream's life: an error after the answer was settled must not go unhandled.
    body.on("error", reject);
  });
}

const DECODER = new TextDecoder();

/** PostgreSQL text holds no NUL; a multi-byte character the cut split in two is dropped, not shown as garbage. */
function textOf(bytes: Uint8Array | undefined, truncated: boolean): string {
  if (bytes === undefined) return "";
  let end = bytes.length;
  if (truncated) {
    // Back up over the continuation bytes (10xxxxxx) of a character that did not fit, and its lead byte.
    let i = end - 1;
    while (i >= 0 && end - i <= 4 && ((bytes[i] ?? 0) & 0xc0) === 0x80) i--;
    const lead = bytes[i] ?? 0;
    const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    if (i >= 0 && end - i < need) end = i;
  }
  return DECODER.decode(bytes.subarray(0, end)).replaceAll("\u0000", "\uFFFD");
}
