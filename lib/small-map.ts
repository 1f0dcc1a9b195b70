// A Map that holds its first entry in two fields and makes a Map from the second entry on. A Map
// costs ~180 bytes even with one entry (its hash table has room for four), and a channel's
// resolver and LB tree keep a dozen maps that hold one entry each in the common case — one
// cluster, one RouteConfiguration, one priority (bench/RESULTS.md, heap per channel). Keys
// compare with ===, as a Map's strings and objects do (NaN, never a key here, would differ).
// Iteration follows a Map's rules: insertion order, entries added during it are visited,
// entries deleted before their turn are not.

export class SmallMap<K, V> implements Iterable<[K, V]> {
  private hasFirst = false;
  private firstKey: K | undefined = undefined;
  private firstValue: V | undefined = undefined;
  /** Every entry, once there were two. */
  private map: Map<K, V> | undefined = undefined;

  get size(): number {
    return this.map ? this.map.size : this.hasFirst ? 1 : 0;
  }

  get(key: K): V | undefined {
    if (this.map) return this.map.get(key);
    return this.hasFirst && this.firstKey === key ? this.firstValue : undefined;
  }

  has(key: K): boolean {
    if (this.map) return this.map.has(key);
    return this.hasFirst && this.firstKey === key;
  }

  set(key: K, value: V): this {
    if (this.map) {
      this.map.set(key, value);
    } else if (!this.hasFirst || this.firstKey === key) {
      this.hasFirst = true;
      this.firstKey = key;
      this.firstValue = value;
    } else {
      this.map = new Map([[this.firstKey as K, this.firstValue as V]]);
      this.map.set(key, value);
      this.dropFirst();
    }
    return this;
  }

  delete(key: K): boolean {
    if (this.map) return this.map.delete(key);
    if (!this.hasFirst || this.firstKey !== key) return false;
    this.dropFirst();
    return true;
  }

  clear(): void {
    this.map?.clear();
    this.dropFirst();
  }

  *entries(): IterableIterator<[K, V]> {
    if (this.map) {
      yield* this.map.entries();
      return;
    }
    if (!this.hasFirst) return;
    const key = this.firstKey as K;
    yield [key, this.firstValue as V];
    // An entry set during the visit made a Map, the visited entry first: go on from the next.
    const map = this.map as Map<K, V> | undefined;
    if (!map) {
      // Deleted during the visit, and another set in its place.
      if (this.hasFirst && this.firstKey !== key) yield [this.firstKey as K, this.firstValue as V];
      return;
    }
    let visited = false;
    for (const entry of map) {
      if (!visited && entry[0] === key) visited = true;
      else yield entry;
    }
  }

  *keys(): IterableIterator<K> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): IterableIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries();
  }

  private dropFirst(): void {
    this.hasFirst = false;
    this.firstKey = undefined;
    this.firstValue = undefined;
  }
}
