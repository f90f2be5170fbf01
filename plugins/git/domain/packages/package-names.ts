import { BadRequestError } from '../../../../lib/errors.ts';
import type { UserRow } from '../identity/user-row.ts';

/** Gitea's package types, as the admin list filters them; only `generic` can be uploaded so far. */
export const PACKAGE_TYPES = [
    'alpine',
    'cargo',
    'chef',
    'composer',
    'conan',
    'conda',
    'container',
    'cran',
    'debian',
    'generic',
    'go',
    'helm',
    'maven',
    'npm',
    'nuget',
    'pub',
    'pypi',
    'rpm',
    'rubygems',
    'swift',
    'terraform',
    'vagrant',
] as const;
export type PackageType = (typeof PACKAGE_TYPES)[number];

/** One version of one package of one owner: what the registry's paths name. */
export interface PackageVersionRef {
    owner: UserRow;
    type: PackageType;
    name: string;
    version: string;
}

/** Indexed columns are at most 191 characters, so that utf8mb4 keys fit MySQL's limit. */
const MAX_NAME_LENGTH = 191;
const GENERIC_NAME = /^[-_+.\w]+$/;
const GENERIC_FILENAME = /^[-_+=:;.()[\]{}~!@#$%^& \w]+$/;

/** Control characters (CR, LF, NUL...) would end up in headers, file names and logs; none is a version's. */
const CONTROL_CHARACTER = /\p{Cc}/u;

/** Gitea's generic registry: a name of word characters, dots, dashes and pluses, not one symbol alone. */
export function isValidGenericName(name: string): boolean {
    const loneSymbol = name.length === 1 && !/[\dA-Za-z]/.test(name);
    return GENERIC_NAME.test(name) && !loneSymbol && name !== '..' && name.length <= MAX_NAME_LENGTH;
}

/** Gitea refuses a version with surrounding spaces; a slash cannot travel in a path, a control character anywhere. */
export function isValidVersion(version: string): boolean {
    const trimmed = version !== '' && version.trim() === version;
    return trimmed && !version.includes('/') && !CONTROL_CHARACTER.test(version) && version.length <= MAX_NAME_LENGTH;
}

export function isValidFilename(filename: string): boolean {
    const special = filename === '.' || filename === '..';
    return GENERIC_FILENAME.test(filename) && filename.trim() === filename && !special && filename.length <= MAX_NAME_LENGTH;
}

/** Throws a 400 for the first name, of the package, the file (when given) or the version, that the registry refuses. */
export function checkGenericRef(ref: PackageVersionRef, filename?: string): void {
    if (!isValidGenericName(ref.name)) {
        throw new BadRequestError('invalid package name');
    }

    if (filename !== undefined && !isValidFilename(filename)) {
        throw new BadRequestError('invalid filename');
    }

    if (!isValidVersion(ref.version)) {
        throw new BadRequestError('invalid package version');
    }
}
