// RBAC principal matching (gRFC A41): who sends an RPC — the verified client certificate's
// identity (`authenticated`) and the peer's address (`source_ip`, which also stands for
// `direct_remote_ip` and `remote_ip`: gRPC has no proxy headers). (Header, path and metadata
// matchers, which both principals and permissions use, are in matchers.ts.)
import type { RbacMatcher } from '../../resources/rbac/update';
import { principalNames } from './peer-identity';
import { ipTest, stringTest, type Test } from './predicates';

type PrincipalMatcher = Extract<RbacMatcher, { type: 'authenticated' | 'source_ip' }>;

export function compilePrincipal(matcher: PrincipalMatcher): Test {
  switch (matcher.type) {
    case 'authenticated': {
      const name = matcher.principalName;
      if (!name) return (request) => request.tls;
      const test = stringTest(name);
      return (request) => request.tls && principalNames(request.peer).some(test);
    }
    case 'source_ip':
      return ipTest(matcher.range, (request) => request.remoteAddress);
  }
}
