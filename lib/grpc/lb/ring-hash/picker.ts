// The ring_hash picker (gRFC A42, A61, A76): a request hash goes to the first working endpoint
// at or after it on the ring; without one, a random walk from a random place. The hash is the
// ConfigSelector's (the route's hash policies), or, with A76's `requestHashHeader`, XXH64 of
// that header's values joined with `,`.

import { connectivityState, experimental } from '@grpc/grpc-js';
import { PICK_HASH } from '../../names';
import { headerValue } from '../../routing/headers';
import { xxh64 } from '../../xxhash64';
import { lowerBound, parseHash, type Ring } from './ring';

type Picker = experimental.Picker;
type PickArgs = experimental.PickArgs;
type PickResult = experimental.PickResult;

const QUEUE: PickResult = {
  pickResultType: experimental.PickResultType.QUEUE,
  subchannel: null,
  status: null,
  onCallStarted: null,
  onCallEnded: null,
};

/**
 * The ring and a copy of every endpoint's state and picker when it was made (A42: a new picker
 * on every change, each with its own copy of the states).
 */
export class RingHashPicker implements Picker {
  private readonly states: connectivityState[];
  private readonly pickers: Picker[];
  private readonly anyConnecting: boolean;

  constructor(
    private readonly ring: Ring,
    /** A76: the header to hash instead of the ConfigSelector's hash; '' for none. */
    private readonly requestHashHeader = '',
  ) {
    this.states = ring.children.map((c) => c.state);
    this.pickers = ring.children.map((c) => c.picker);
    this.anyConnecting = this.states.includes(connectivityState.CONNECTING);
  }

  pick(args: PickArgs): PickResult {
    const hash = this.requestHash(args);
    if (hash === undefined) return this.pickAtRandom(args);
    const { hashes, entries, children } = this.ring;
    const first = lowerBound(hashes, hash);
    for (let i = 0; i < entries.length; i++) {
      const c = entries[(first + i) % entries.length]!;
      switch (this.states[c]) {
        case connectivityState.READY:
          return this.pickers[c]!.pick(args);
        case connectivityState.IDLE:
          children[c]!.requestConnection();
          return QUEUE;
        case connectivityState.CONNECTING:
          return QUEUE;
        default:
        // TRANSIENT_FAILURE: pick_first keeps retrying it; try the next endpoint on the ring.
      }
    }
    // Every endpoint has failed: the first one's failure.
    return this.pickers[entries[first]!]!.pick(args);
  }

  /**
   * With a request hash header, the hash of its value (A76: an RPC without the header gets a
   * random walk, like an RPC whose route has no hash policies); else the ConfigSelector's.
   */
  private requestHash(args: PickArgs): bigint | undefined {
    if (this.requestHashHeader !== '') {
      const value = headerValue(args.metadata, this.requestHashHeader);
      return value === undefined ? undefined : xxh64(value);
    }
    const text = args.extraPickInfo[PICK_HASH];
    return text === undefined ? undefined : parseHash(text);
  }

  /**
   * No request hash (a route without hash policies): gRFC A76's random walk. The first READY
   * endpoint from a random place on the ring; if there is none, at most one IDLE endpoint is
   * asked to connect (none while one already is) and the pick waits.
   */
  private pickAtRandom(args: PickArgs): PickResult {
    const { entries, children } = this.ring;
    const first = Math.floor(Math.random() * entries.length);
    let requested = this.anyConnecting;
    for (let i = 0; i < entries.length; i++) {
      const c = entries[(first + i) % entries.length]!;
      const state = this.states[c];
      if (state === connectivityState.READY) return this.pickers[c]!.pick(args);
      if (!requested && state === connectivityState.IDLE) {
        children[c]!.requestConnection();
        requested = true;
      }
    }
    if (requested) return QUEUE;
    return this.pickers[entries[first]!]!.pick(args);
  }
}
