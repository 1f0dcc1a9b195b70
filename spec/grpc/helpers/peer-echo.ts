// What the xDS security specs share: an Echo service that answers with the SANs of the client
// certificate the server authenticated, and one RPC to it that reports the answer or the failure.
import * as grpc from '@grpc/grpc-js';
import { BOOTSTRAP_OPTION, XdsChannelCredentials } from '../../../lib/grpc';
import { EVENT_DEADLINE_MS } from '../../helpers/constants';
import { ECHO_PATH, unaryMethod } from './backends';

const identity = (b: Buffer) => b;

/**
 * How long a spec waits for rotated files to be in use: both sides re-read them (every 0.1 s in
 * specs), the server swaps its secure context, and the client reconnects after its backoff,
 * several events in a row, each of which may take EVENT_DEADLINE_MS on a loaded machine.
 */
export const ROTATION_WAIT_MS = 3 * EVENT_DEADLINE_MS;

export const PEER_ECHO_SERVICE: grpc.ServiceDefinition = { Echo: unaryMethod(ECHO_PATH) };

/** Echo answers `peer <SANs>`, or `no peer certificate`. */
export const PEER_ECHO_HANDLERS: grpc.UntypedServiceImplementation = {
  Echo: (call: grpc.ServerUnaryCall<Buffer, string>, done: grpc.sendUnaryData<string>) => {
    const peer = call.getAuthContext().sslPeerCertificate;
    done(null, peer?.subjectaltname ? `peer ${peer.subjectaltname}` : 'no peer certificate');
  },
};

/**
 * One RPC: the server's answer, or the failure's status code name (followed by `: details`
 * when `withDetails`).
 */
export function peerCall(client: grpc.Client, { withDetails = false } = {}): Promise<string> {
  return new Promise((resolve) => {
    client.makeUnaryRequest<Buffer, string>(
      ECHO_PATH,
      identity,
      (b: Buffer) => b.toString(),
      Buffer.alloc(0),
      new grpc.Metadata(),
      { deadline: Date.now() + 2000 },
      (error, answer) => {
        if (!error) resolve(answer!);
        else resolve(`${grpc.status[error.code]}${withDetails ? `: ${error.details}` : ''}`);
      },
    );
  });
}

/**
 * A client of `target` with its own subchannels (no sharing between specs) that reconnects
 * within 200 ms; XdsChannelCredentials over plaintext unless `credentials` are given.
 */
export function securityClient(
  target: string,
  bootstrap: string,
  credentials: grpc.ChannelCredentials = new XdsChannelCredentials(
    grpc.credentials.createInsecure(),
  ),
): grpc.Client {
  return new grpc.Client(target, credentials, {
    [BOOTSTRAP_OPTION]: bootstrap,
    'grpc.use_local_subchannel_pool': 1,
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 200,
  });
}
