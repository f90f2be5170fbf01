import type { Server } from '@hapi/hapi';

import { service } from '../../../lib/services.ts';
import { FailureThrottle } from '../../../lib/throttle.ts';

/**
 * The deploy manager's failed sign-ins, two-factor codes and in-session password and code checks, counted per
 * account (e-mail) and client address (see lib/throttle.ts for the scheme).
 */
export const loginLimiter = (server: Server): FailureThrottle =>
    service(server, 'loginLimiter', (owner) => new FailureThrottle(owner.app.config.signInLimits));
