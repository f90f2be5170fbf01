import argon2 from 'argon2';

/**
 * argon2id with OWASP's minimum profile (19 MiB, 2 passes, 1 lane): about 20 ms a hash on one core,
 * so logins stay cheap for the server and costly for anyone guessing offline.
 */
export const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const MIN_PASSWORD_LENGTH = 8;

export async function hashPassword(password: string): Promise<string> {
    return await argon2.hash(password, ARGON2_OPTIONS);
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
    if (!hash) {
        return false;
    }

    try {
        return await argon2.verify(hash, password);
    } catch {
        return false;
    }
}
