// A bootstrap's node (A27) and its authorities with their listener name templates (A47).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadBootstrap } from '../../lib/bootstrap';
import { MINIMAL, assertInvalid, withAuthorities, withNode } from './fixtures';

describe('loadBootstrap node', () => {
  it('allows a missing node or node.id: the id is empty', () => {
    assert.equal(loadBootstrap(MINIMAL).node.id, '');
    assert.deepEqual(loadBootstrap(withNode({ cluster: 'c' })).node, {
      id: '',
      cluster: 'c',
      locality: undefined,
      metadata: undefined,
    });
  });

  it('reads every node field', () => {
    const node = loadBootstrap(
      withNode({
        id: 'projects/1/networks/default/nodes/abc',
        cluster: 'cluster',
        locality: { region: 'r', zone: 'z', sub_zone: 's' },
        metadata: { TRAFFICDIRECTOR_NETWORK_NAME: 'default', nested: { list: [1, null, true] } },
      }),
    ).node;
    assert.deepEqual(node, {
      id: 'projects/1/networks/default/nodes/abc',
      cluster: 'cluster',
      locality: { region: 'r', zone: 'z', subZone: 's' },
      metadata: { TRAFFICDIRECTOR_NETWORK_NAME: 'default', nested: { list: [1, null, true] } },
    });
  });

  it('defaults the locality fields to empty strings', () => {
    assert.deepEqual(loadBootstrap(withNode({ locality: { zone: 'z' } })).node.locality, {
      region: '',
      zone: 'z',
      subZone: '',
    });
  });

  it('names the node field of the wrong type', () => {
    assertInvalid(withNode('n'), 'node: must be an object (got string)');
    assertInvalid(withNode({ id: 7 }), 'node.id: must be a string (got number)');
    assertInvalid(withNode({ cluster: [] }), 'node.cluster: must be a string (got array)');
    assertInvalid(withNode({ locality: 'z' }), 'node.locality: must be an object (got string)');
    assertInvalid(
      withNode({ locality: { region: null } }),
      'node.locality.region: must be a string (got null)',
    );
    assertInvalid(
      withNode({ locality: { zone: 1 } }),
      'node.locality.zone: must be a string (got number)',
    );
    assertInvalid(
      withNode({ locality: { sub_zone: false } }),
      'node.locality.sub_zone: must be a string (got boolean)',
    );
    assertInvalid(withNode({ metadata: [] }), 'node.metadata: must be an object (got array)');
  });

  it('rejects metadata values JSON cannot carry (object input)', () => {
    assertInvalid(
      withNode({ metadata: { a: { f: () => 1 } } }),
      'node.metadata.a.f: must be a JSON value (got function)',
    );
    assertInvalid(
      withNode({ metadata: { n: [Number.NaN] } }),
      'node.metadata.n[0]: must be a finite number (got NaN)',
    );
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    assertInvalid(withNode({ metadata: cyclic }), 'node.metadata.self: must not contain a cycle');
  });
});

describe('loadBootstrap authorities and templates', () => {
  it('defaults the resource name templates', () => {
    const bootstrap = loadBootstrap(withAuthorities({ 'a.example.com': {} }));
    assert.equal(bootstrap.clientDefaultListenerResourceNameTemplate, '%s');
    assert.equal(bootstrap.serverListenerResourceNameTemplate, undefined);
    assert.deepEqual(bootstrap.authorities.get('a.example.com'), {
      name: 'a.example.com',
      xdsServers: [],
      clientListenerResourceNameTemplate:
        'xdstp://a.example.com/envoy.config.listener.v3.Listener/%s',
    });
  });

  it('reads the templates when set', () => {
    const bootstrap = loadBootstrap({
      ...MINIMAL,
      client_default_listener_resource_name_template:
        'xdstp://a/envoy.config.listener.v3.Listener/%s',
      server_listener_resource_name_template: 'grpc/server?xds.resource.listening_address=%s',
      authorities: { a: { client_listener_resource_name_template: 'xdstp://a/listeners/%s' } },
    });
    assert.equal(
      bootstrap.clientDefaultListenerResourceNameTemplate,
      'xdstp://a/envoy.config.listener.v3.Listener/%s',
    );
    assert.equal(
      bootstrap.serverListenerResourceNameTemplate,
      'grpc/server?xds.resource.listening_address=%s',
    );
    assert.equal(
      bootstrap.authorities.get('a')?.clientListenerResourceNameTemplate,
      'xdstp://a/listeners/%s',
    );
  });

  it('requires the templates to be strings', () => {
    assertInvalid(
      { ...MINIMAL, client_default_listener_resource_name_template: 1 },
      'client_default_listener_resource_name_template: must be a string (got number)',
    );
    assertInvalid(
      { ...MINIMAL, server_listener_resource_name_template: {} },
      'server_listener_resource_name_template: must be a string (got object)',
    );
    assertInvalid(
      withAuthorities({ a: { client_listener_resource_name_template: 1 } }),
      'authorities["a"].client_listener_resource_name_template: must be a string (got number)',
    );
  });

  it('requires an authority template to start with xdstp://<authority>/', () => {
    assertInvalid(
      withAuthorities({ a: { client_listener_resource_name_template: 'xdstp://a.b/x/%s' } }),
      'authorities["a"].client_listener_resource_name_template: ' +
        'must start with "xdstp://a/" (got "xdstp://a.b/x/%s")',
    );
    assertInvalid(
      withAuthorities({ a: { client_listener_resource_name_template: '%s' } }),
      'authorities["a"].client_listener_resource_name_template: ' +
        'must start with "xdstp://a/" (got "%s")',
    );
  });

  it('reads and validates an authority xds_servers', () => {
    const authorityServer = { server_uri: 'a-xds:443', channel_creds: [{ type: 'insecure' }] };
    const bootstrap = loadBootstrap(withAuthorities({ a: { xds_servers: [authorityServer] } }));
    assert.equal(bootstrap.authorities.get('a')?.xdsServers[0]?.serverUri, 'a-xds:443');
    assert.deepEqual(
      loadBootstrap(withAuthorities({ a: { xds_servers: [] } })).authorities.get('a')?.xdsServers,
      [],
    );
    assertInvalid(
      withAuthorities({ a: { xds_servers: [{ channel_creds: [{ type: 'insecure' }] }] } }),
      'authorities["a"].xds_servers[0].server_uri: field not present',
    );
    assertInvalid(
      withAuthorities({
        a: { xds_servers: [{ server_uri: 'x', channel_creds: [{ type: 'foo' }] }] },
      }),
      'authorities["a"].xds_servers[0].channel_creds: no supported type (got "foo")',
    );
    assertInvalid(
      withAuthorities({ a: { xds_servers: 'x' } }),
      'authorities["a"].xds_servers: must be an array (got string)',
    );
  });

  it('requires authorities and each authority to be objects', () => {
    assertInvalid(withAuthorities([]), 'authorities: must be an object (got array)');
    assertInvalid(withAuthorities({ a: 1 }), 'authorities["a"]: must be an object (got number)');
  });
});
