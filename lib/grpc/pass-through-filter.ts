// A grpc-js dynamic filter that passes everything through unchanged, for the plugin's per-RPC
// filters to override only what they act on. Synchronous on purpose: grpc-js's BaseFilter
// costs a promise per message and per metadata.
import { experimental } from '@grpc/grpc-js';

type Filter = experimental.Filter;

export abstract class PassThroughFilter implements Filter {
  sendMetadata(
    metadata: Parameters<Filter['sendMetadata']>[0],
  ): ReturnType<Filter['sendMetadata']> {
    return metadata;
  }
  receiveMetadata(metadata: Parameters<Filter['receiveMetadata']>[0]) {
    return metadata;
  }
  sendMessage(message: Parameters<Filter['sendMessage']>[0]) {
    return message;
  }
  receiveMessage(message: Parameters<Filter['receiveMessage']>[0]) {
    return message;
  }
  receiveTrailers(status: Parameters<Filter['receiveTrailers']>[0]) {
    return status;
  }
}
