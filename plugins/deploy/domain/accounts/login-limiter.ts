import { defineService } from '../../../../lib/services.ts';
import { FailureThrottle, SharedFailures } from '../../../../lib/throttle.ts';

/**
 * The deploy manager's failed sign-ins, two-factor codes and in-session password and code checks, counted per
 * account (e-mail) and client address (see lib/throttle.ts for the scheme), in the database, so that every
 * Gatehouse process on it counts the same ones.
 */
export const loginLimiter = defineService<FailureThrottle>(
    'loginLimiter',
    (owner) => new FailureThrottle(owner.app.config.signInLimits, Date.now, new SharedFailures(owner.app.knex, 'deploy')),
);
