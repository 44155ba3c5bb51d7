/**
 * Reads a child's stdout one line at a time: each call resolves to the next line, or null
 * once the stream has ended. Calls are served in order even when made concurrently.
 */
export function lineReader(stream: ReadableStream<Uint8Array>): () => Promise<string | null> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  let ended = false;
  const readOne = async (): Promise<string | null> => {
    for (;;) {
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        return line;
      }
      if (ended) return null;
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        buf += decoder.decode();
        if (buf) {
          const last = buf;
          buf = "";
          return last;
        }
        return null;
      }
      buf += decoder.decode(value, { stream: true });
    }
  };
  let chain: Promise<string | null> = Promise.resolve(null);
  return () => (chain = chain.then(readOne, readOne));
}
