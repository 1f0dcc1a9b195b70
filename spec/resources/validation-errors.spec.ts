// ValidationErrors as docs/api.md shows it to authors of their own ResourceType: paths built
// with field()/index(), every problem kept, a cap per path. Imported from the public entry.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ValidationErrors, type DecodeResult } from '../../lib/index';

interface Foo {
  readonly name: string;
  readonly backends: readonly { readonly host: string }[];
  readonly weight: number;
}

/** The validation half of the docs' example decoder. */
function validateFoo(foo: Foo): DecodeResult<Foo> {
  const errors = new ValidationErrors();
  errors.field('backends', () =>
    foo.backends.forEach((b, i) =>
      errors.index(i, () => {
        if (!b.host) errors.addAt('host', 'must be non-empty');
      }),
    ),
  );
  if (foo.weight === 0) errors.addAt('weight', 'must be greater than 0');
  return errors.isEmpty
    ? { name: foo.name, resource: Object.freeze(foo) }
    : { name: foo.name, errors: errors.list() };
}

describe('ValidationErrors', () => {
  it('names every problem under its field path', () => {
    const result = validateFoo({ name: 'a', backends: [{ host: 'x' }, { host: '' }], weight: 0 });
    assert.deepEqual(result, {
      name: 'a',
      errors: [
        { path: 'backends[1].host', message: 'must be non-empty' },
        { path: 'weight', message: 'must be greater than 0' },
      ],
    });
  });

  it('a valid resource has no errors', () => {
    const result = validateFoo({ name: 'a', backends: [{ host: 'x' }], weight: 1 });
    assert.ok('resource' in result);
  });

  it('keeps twenty messages per path then says more were omitted', () => {
    const errors = new ValidationErrors();
    for (let i = 0; i < 25; i++) errors.addAt('f', `problem ${i}`);
    const list = errors.list();
    assert.equal(list.length, 21);
    assert.deepEqual(list[20], { path: 'f', message: 'more errors omitted' });
    assert.equal(errors.count, 21);
  });

  it('field and index return their callbacks result', () => {
    const errors = new ValidationErrors();
    assert.equal(
      errors.field('a', () => errors.index(2, () => 7)),
      7,
    );
    assert.equal(errors.isEmpty, true);
  });
});
