// The addresses one ClusterLoadAssignment's endpoints have claimed so far, to find a duplicate
// anywhere in it. Nearly every address is IPv4: those are kept as numbers (`ipv4Key`: the
// address's 32-bit value * 65536 + the port, exact in a double) in an open-addressed table of doubles, since a Set of such numbers (each a
// heap number, hashed by value) cost ~5 ms per 100,000 endpoints, as much as reading them. The
// table is a plain array of doubles, not a Float64Array: one is made per assignment, and a typed
// array's separate backing store cost more to make than the claims it served.
// Any other address is kept as its canonical text in a Set made when the first one comes.

/** Not an integer, so never a key; and a double, so the array holds unboxed doubles. */
const EMPTY = -0.5;
const MIN_SLOTS = 16;

export class ClaimedAddresses {
  private slots: number[];
  private count = 0;
  private texts: Set<string> | undefined;

  /** `expected`: about how many addresses will be claimed (the table grows past it). */
  constructor(expected: number) {
    let size = MIN_SLOTS;
    while (size < expected * 2) size *= 2;
    this.slots = new Array<number>(size).fill(EMPTY);
  }

  /** Claims an IPv4 address and port by its `ipv4Key`: false when it was claimed already. */
  claimIpv4(key: number): boolean {
    const slots = this.slots;
    const mask = slots.length - 1;
    // The key's two halves, address and port, mixed into a slot (Math.imul: 32-bit multiplies).
    const ip = Math.floor(key / 65536);
    let i = Math.imul(ip ^ Math.imul(key - ip * 65536, 0x9e3779b1), 0x85ebca6b) & mask;
    for (;;) {
      const slot = slots[i]!;
      if (slot === key) return false;
      if (slot === EMPTY) break;
      i = (i + 1) & mask;
    }
    slots[i] = key;
    if (++this.count * 2 > slots.length) this.grow();
    return true;
  }

  /** Claims an address by its canonical text (not IPv4): false when it was claimed already. */
  claimText(text: string): boolean {
    this.texts ??= new Set();
    if (this.texts.has(text)) return false;
    this.texts.add(text);
    return true;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Array<number>(old.length * 2).fill(EMPTY);
    this.count = 0;
    for (const key of old) {
      if (key !== EMPTY) this.claimIpv4(key);
    }
  }
}
