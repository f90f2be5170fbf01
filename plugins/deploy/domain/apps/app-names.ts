/** An app's name is its identifier in paths, its folder, its compose project and its sub-domain. */
const APP_NAME = /^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/;

const RESERVED_APP_NAMES = new Set([
    'api',
    'www',
    'admin',
    'auth',
    'authentik',
    'idp',
    'sso',
    'login',
    'mail',
    'smtp',
    'imap',
    'ftp',
    'ns1',
    'ns2',
    'gatehouse',
    'localhost',
    'default',
    'nginx',
    'docker',
    'registry',
    'static',
    'assets',
    'new',
    'check',
]);

export function appNameProblem(name: string): string | undefined {
    if (!APP_NAME.test(name)) {
        return 'name: must be a lower-case DNS label (letters, digits and hyphens, starting with a letter, at most 63 characters)';
    }

    if (RESERVED_APP_NAMES.has(name)) {
        return `name: ${name} is reserved`;
    }

    return undefined;
}
