// An example service with an admin port: it calls `xds:///demo.example.com` through xds-client's
// grpc plugin, and serves CSDS on 127.0.0.1 so that `xds-client csds` can show what its xDS
// client holds. The bootstrap comes from GRPC_XDS_BOOTSTRAP or GRPC_XDS_BOOTSTRAP_CONFIG.
//
//   npm run build
//   npx xds-client serve --snapshot examples/demo-snapshot.yaml --port 18000 &
//   npx xds-client bootstrap --server 127.0.0.1:18000 --node-id example > /tmp/bootstrap.json
//   GRPC_XDS_BOOTSTRAP=/tmp/bootstrap.json node --import tsx examples/service-with-csds.ts
//   npx xds-client csds --server 127.0.0.1:50052
//
// ADMIN_PORT sets the admin port (default 50052; 0 picks a free one). Stop it with Ctrl-C.
import * as grpc from '@grpc/grpc-js';
import { addCsdsService } from 'xds-client';
import { register } from 'xds-client/grpc';

register();
const target = process.env['TARGET'] ?? 'xds:///demo.example.com';
const channel = new grpc.Client(target, grpc.credentials.createInsecure());
// Resolving the target is what fetches its Listener, routes, clusters and endpoints.
channel.getChannel().getConnectivityState(true);

const admin = new grpc.Server();
addCsdsService(admin);
admin.bindAsync(
  `127.0.0.1:${process.env['ADMIN_PORT'] ?? 50052}`,
  grpc.ServerCredentials.createInsecure(),
  (error, port) => {
    if (error) {
      console.error(`admin port: ${error.message}`);
      process.exit(2);
    }
    console.log(`calling ${target}; CSDS on 127.0.0.1:${port}`);
  },
);

const stop = () => {
  channel.close();
  admin.forceShutdown();
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
