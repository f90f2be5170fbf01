/** Gitea's rules for user, organisation and repository names. */

const USERNAME_PATTERN = /^[\da-zA-Z][-.\w]*$/;
const REPEATED_OR_TRAILING = /[-._]{2,}|[-._]$/;

const RESERVED_USER_NAMES = new Set([
    '.',
    '..',
    '.well-known',
    'api',
    'metrics',
    'v2',
    'assets',
    'attachments',
    'avatar',
    'avatars',
    'repo-avatars',
    'captcha',
    'login',
    'org',
    'repo',
    'user',
    'explore',
    'issues',
    'pulls',
    'milestones',
    'notifications',
    'favicon.ico',
    'manifest.json',
    'robots.txt',
    'sitemap.xml',
    'ssh_info',
    'swagger.v1.json',
    'openapi3.v1.json',
    'ghost',
    'gitea-actions',
]);
const RESERVED_USER_PATTERNS = ['.keys', '.gpg', '.rss', '.atom', '.png'];

const REPO_NAME_PATTERN = /^[-.\w]+$/;
const RESERVED_REPO_NAMES = new Set(['.', '..', '-']);
const RESERVED_REPO_PATTERNS = ['.git', '.rss', '.atom', '.wiki'];

export type NameProblem = { kind: 'invalid' | 'reserved' | 'pattern'; message: string };

/** Why a user or organisation name is refused, or undefined when it is acceptable. */
export function userNameProblem(name: string): NameProblem | undefined {
    if (name.length === 0 || name.length > 40 || !USERNAME_PATTERN.test(name) || REPEATED_OR_TRAILING.test(name)) {
        return { kind: 'invalid', message: `user name is invalid [name: ${name}]` };
    }

    const lower = name.toLowerCase();
    if (RESERVED_USER_NAMES.has(lower)) {
        return { kind: 'reserved', message: `name is reserved [name: ${name}]` };
    }

    const pattern = RESERVED_USER_PATTERNS.find((suffix) => lower.endsWith(suffix));
    if (pattern) {
        return { kind: 'pattern', message: `name pattern is not allowed [pattern: *${pattern}]` };
    }

    return undefined;
}

/** Why a repository name is refused, or undefined when it is acceptable. */
export function repositoryNameProblem(name: string): NameProblem | undefined {
    if (name.length === 0 || name.length > 100 || !REPO_NAME_PATTERN.test(name)) {
        return { kind: 'invalid', message: `repository name is invalid [name: ${name}]` };
    }

    const lower = name.toLowerCase();
    if (RESERVED_REPO_NAMES.has(lower)) {
        return { kind: 'reserved', message: `repo name is reserved [name: ${name}]` };
    }

    const pattern = RESERVED_REPO_PATTERNS.find((suffix) => lower.endsWith(suffix));
    if (pattern) {
        return { kind: 'pattern', message: `repo name pattern is not allowed [pattern: *${pattern}]` };
    }

    return undefined;
}

export const VISIBILITIES = ['public', 'limited', 'private'] as const;
export type Visibility = (typeof VISIBILITIES)[number];
