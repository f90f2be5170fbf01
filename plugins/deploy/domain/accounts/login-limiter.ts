import { defineService } from '../../../../lib/services.ts';
import { FailureThrottle } from '../../../../lib/throttle.ts';

/**
 * The deploy manager's failed sign-ins, two-factor codes and in-session password and code checks, counted per
 * account (e-mail) and client address (see lib/throttle.ts for the scheme).
 */
export const loginLimiter = defineService<FailureThrottle>('loginLimiter', (owner) => new FailureThrottle(owner.app.config.signInLimits));
