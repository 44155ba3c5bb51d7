/**
 * A value made on the first call and kept: how dl builds a zod schema (or a shape of
 * them) only when something uses it. zod schemas cost time and memory to build, and a
 * `dl serve` that answers `tools/list` needs only its listed tools' schemas.
 */
export function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
}
