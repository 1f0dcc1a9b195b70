// RBAC permission matching (gRFC A41): what an RPC asks for — the connection's local address and
// port, and the server name it requested. (Header, path and metadata matchers, which both
// permissions and principals use, are in matchers.ts.)
import type { RbacMatcher } from '../../resources/rbac/update';
import { ipTest, stringTest, type Test } from './predicates';

type PermissionMatcher = Extract<
  RbacMatcher,
  { type: 'destination_ip' | 'destination_port' | 'requested_server_name' }
>;

export function compilePermission(matcher: PermissionMatcher): Test {
  switch (matcher.type) {
    case 'destination_ip':
      return ipTest(matcher.range, (request) => request.localAddress);
    case 'destination_port': {
      const { start, end } = matcher;
      return (request) =>
        request.localPort !== undefined && request.localPort >= start && request.localPort < end;
    }
    case 'requested_server_name': {
      // A41: gRPC has no requested server name; it reads as the empty string.
      const result = stringTest(matcher.name)('');
      return () => result;
    }
  }
}
