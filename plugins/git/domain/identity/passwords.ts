// Hashing lives in lib/, shared with the deploy manager's accounts; the git service's own rule is the minimum length.
export { ARGON2_OPTIONS, hashPassword, verifyPassword } from '../../../../lib/passwords.ts';

export const MIN_PASSWORD_LENGTH = 8;
