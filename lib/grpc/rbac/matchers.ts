// One RBAC matcher compiled to a test of a request (gRFC A41): the combinators (and, or, not,
// any) and the matchers permissions and principals share (header, url_path, metadata); the
// others are in permissions.ts and principals.ts.
import type { RbacMatcher } from '../../resources/rbac/update';
import { compileHeaderCondition } from '../routing/headers';
import { compilePermission } from './permissions';
import { compilePrincipal } from './principals';
import { rbacHeaderValue } from './request';
import { stringTest, type Test } from './predicates';

export function compileMatcher(matcher: RbacMatcher): Test {
  switch (matcher.type) {
    case 'and': {
      const tests = matcher.matchers.map(compileMatcher);
      return (request) => tests.every((t) => t(request));
    }
    case 'or': {
      const tests = matcher.matchers.map(compileMatcher);
      return (request) => tests.some((t) => t(request));
    }
    case 'not': {
      const test = compileMatcher(matcher.matcher);
      return (request) => !test(request);
    }
    case 'any':
      return () => true;
    case 'header': {
      const compiled = compileHeaderCondition(matcher.header, rbacHeaderValue);
      if ('error' in compiled) throw new Error(compiled.error);
      return compiled;
    }
    case 'url_path': {
      const test = stringTest(matcher.path);
      return (request) => test(request.path);
    }
    case 'metadata': {
      // Envoy metadata is always empty in gRPC: no value matches, so only `invert` matches.
      const result = matcher.invert;
      return () => result;
    }
    case 'destination_ip':
    case 'destination_port':
    case 'requested_server_name':
      return compilePermission(matcher);
    case 'authenticated':
    case 'source_ip':
      return compilePrincipal(matcher);
  }
}
