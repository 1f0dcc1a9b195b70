// Lists kept for long, frozen at their own length.

/**
 * `items`, frozen in an array of their own length. An array grown by `push` keeps room for more
 * (16 slots from the first push: ~110 bytes over for one or two items), and what a cached update
 * or a channel's configuration keeps, it keeps for as long as it lives, once per channel for
 * some of them.
 */
export function frozenList<T>(items: T[]): readonly T[] {
  return Object.freeze(items.length === 0 ? items : items.slice());
}
