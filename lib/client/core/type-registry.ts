import { status } from '@grpc/grpc-js';
import { XdsError } from '../../errors';
import type { ResourceType } from '../../resources/resource-type';

/**
 * The resource types a client has been asked to watch, by type URL: ours or a user's own. A
 * response of a type not registered is neither ACKed nor NACKed.
 */
export class TypeRegistry {
  private readonly types = new Map<string, ResourceType<unknown>>();

  /** Registers `type`; throws if another type has its type URL. */
  register(type: ResourceType<unknown>): void {
    const known = this.types.get(type.typeUrl);
    if (known === undefined) this.types.set(type.typeUrl, type);
    else if (known !== type) {
      throw new XdsError(
        status.INVALID_ARGUMENT,
        `another resource type is already registered for ${type.typeUrl}`,
      );
    }
  }

  get(typeUrl: string): ResourceType<unknown> | undefined {
    return this.types.get(typeUrl);
  }

  has(typeUrl: string): boolean {
    return this.types.has(typeUrl);
  }
}
