// Listener proto → ListenerUpdate, or every problem found. A client-side Listener is an
// api_listener holding an HttpConnectionManager (http-connection-manager.ts); a server-side one
// has an address and filter chains (server-listener.ts).
import type { Listener } from '../../generated/protos';
import type { ValidationErrors } from '../../validation-errors';
import type { ProviderNames } from '../common-tls-context';
import type { RouteValidationOptions } from '../route-config/validate';
import { EMPTY_HCM, validateHcmAny } from './http-connection-manager';
import { validateServerListener } from './server-listener';
import type { ListenerUpdate } from './update';

/**
 * Validates a Listener: client-side with an api_listener, else server-side (gRFC A36) when it
 * has an address. The result is only meaningful when no error was added.
 */
export function validateListener(
  listener: Listener,
  errors: ValidationErrors,
  certificateProviders?: ProviderNames,
  /** For an inline RouteConfiguration (gRFC A81's trusted server). */
  routeOptions: RouteValidationOptions = {},
): ListenerUpdate {
  const apiListener = listener.apiListener;
  if (!apiListener) {
    if (listener.address) {
      const server = validateServerListener(listener, errors, certificateProviders);
      return Object.freeze({ name: listener.name, httpConnectionManager: EMPTY_HCM, server });
    }
    errors.addAt('api_listener', 'field not present');
    return Object.freeze({ name: listener.name, httpConnectionManager: EMPTY_HCM });
  }
  const httpConnectionManager = errors.field('api_listener', () =>
    errors.field('api_listener', () => {
      const any = apiListener.apiListener;
      if (!any) {
        errors.add('field not present');
        return EMPTY_HCM;
      }
      return validateHcmAny(any, errors, 'client', routeOptions);
    }),
  );
  return Object.freeze({ name: listener.name, httpConnectionManager });
}
