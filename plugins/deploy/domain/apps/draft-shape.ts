import type Joi from 'joi';

import { deployValidationMessage, ValidationError } from '../../../../lib/errors.ts';
import { ROOT_DIR } from '../../../../lib/paths.ts';
import { readDeploySpec } from '../../../../lib/spec/deploy-loader.ts';
import { type Definitions, SchemaConverter } from '../../../../lib/spec/schema-to-joi.ts';
import { checkAcsPath } from '../../../sso/method-types.ts';
import { deploySpecDefinitions } from './spec-definitions.ts';

/** A sign-in method's name (plugins/sso/methods/<name>.ts), 'recipe' (the recipe's), or '' (none chosen yet): see spec-definitions.ts. */
export type AccountMethod = string;

/** The draft fields the seed names; `secrets` and `sharedPassword` are kept sealed, apart from the rest. */
export interface DraftInput {
    title?: string;
    compose?: string;
    secrets?: Record<string, string>;
    composeEditor?: 'model' | 'text';
    nginx?: string;
    nginxEditor?: 'model' | 'text';
    /** `access`: who may reach the app, said outright (see AccessService.refuseAccidentalAccess); groups when unset. */
    auth?: { groups?: Array<{ pk: string; name: string }>; access?: 'groups' | 'public' | 'signed-in' };
    account?: AccountMethod;
    adminUser?: string;
    samlAcs?: string;
    samlAudience?: string;
    sharedUser?: string;
    sharedPassword?: string;
    /** The auto-login adapter and the app's login page (found by the adapter when not given). */
    login?: { adapter: string; path?: string };
    step?: string;
}

export type StoredDraft = Omit<DraftInput, 'secrets' | 'sharedPassword'> & { compose: string; nginx: string };

/** What the draft's route spec cannot declare (the loader knows no maxProperties), and what a MariaDB TEXT column holds. */
export const DRAFT_LIMITS = {
    secrets: 200,
    /** The secrets as JSON; sealed (AES-GCM, base64) they still fit the column. */
    secretsBytes: 48_000,
    /** The draft as stored: JSON, UTF-8. */
    storedBytes: 65_535,
} as const;

/** Kept sealed in columns of their own, never in the stored draft. */
const SEALED_FIELDS = new Set(['secrets', 'sharedPassword']);

const SPEC_FILE = `${ROOT_DIR}/specs/deploy/apps.yaml`;

/** Built for the definitions of one start (the sign-in methods there were then). */
let draftSchema: { definitions: Definitions; schema: Joi.Schema } | undefined;

/** The saveDraft route's own payload schema (closed, bounded): one declaration for what is saved and what is read back. */
function schema(): Joi.Schema {
    const definitions = deploySpecDefinitions();
    if (draftSchema?.definitions !== definitions) {
        const payload = readDeploySpec(SPEC_FILE).routes.find((route) => route.handler === 'saveDraft')?.payload;
        if (!payload) {
            throw new Error(`${SPEC_FILE}: the saveDraft route declares no payload`);
        }

        draftSchema = { definitions, schema: new SchemaConverter(definitions).toJoi(payload) };
    }

    return draftSchema.schema;
}

/** Sizes that were allowed before the draft's limits: a stored field over them is kept rather than lost. */
const SIZE_RULES = new Set(['string.max', 'array.max']);

/** Whether a stored field has the draft's shape, whatever its size. */
function hasDraftShape(fields: Record<string, unknown>): boolean {
    const { error } = schema().validate(fields, { abortEarly: false });
    return !error || error.details.every((detail) => SIZE_RULES.has(detail.type));
}

/** Whether the draft would take the name as its admin (or shared) account: the spec's pattern, one declaration. */
export function isAccountName(name: string): boolean {
    return schema().validate({ adminUser: name }).error === undefined;
}

/** Refuses draft fields the route would refuse, whoever saves them (the compose and nginx updates save into the draft too). */
export function checkDraftFields(fields: DraftInput): void {
    const { error } = schema().validate(fields);
    if (error) {
        throw new ValidationError(deployValidationMessage(error));
    }

    checkSamlAcs(fields.samlAcs);
}

/** The SAML ACS path, served without forward auth, must open that path alone; empty clears it. */
export function checkSamlAcs(samlAcs: string | undefined): void {
    const problem = samlAcs ? checkAcsPath(samlAcs) : undefined;
    if (problem) {
        throw new ValidationError(`samlAcs: ${problem}`);
    }
}

export function checkSecretsSize(secrets: Record<string, string>): void {
    if (Object.keys(secrets).length > DRAFT_LIMITS.secrets) {
        throw new ValidationError(`secrets: at most ${DRAFT_LIMITS.secrets} secrets`);
    }

    if (Buffer.byteLength(JSON.stringify(secrets)) > DRAFT_LIMITS.secretsBytes) {
        throw new ValidationError(`secrets: at most ${DRAFT_LIMITS.secretsBytes} bytes together`);
    }
}

/** The draft as it is stored; refused when larger than its column holds. */
export function storedDraftText(draft: StoredDraft): string {
    const text = JSON.stringify(draft);
    const bytes = Buffer.byteLength(text);
    if (bytes > DRAFT_LIMITS.storedBytes) {
        throw new ValidationError(
            `draft: ${bytes} bytes as stored, at most ${DRAFT_LIMITS.storedBytes} (compose and nginx text count the most)`,
        );
    }

    return text;
}

function parsedObject(text: string): Record<string, unknown> {
    try {
        const value: unknown = JSON.parse(text);
        return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
    } catch {
        return {};
    }
}

/**
 * A stored draft as the service may use and show it. Drafts stored before the draft had a closed shape may hold
 * anything: each field is kept only when it has the draft's shape, and sealed fields never come from here.
 */
export function draftFromStored(text: string): StoredDraft {
    const draft: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(parsedObject(text))) {
        if (!SEALED_FIELDS.has(name) && hasDraftShape({ [name]: value })) {
            draft[name] = value;
        }
    }

    return {
        ...draft,
        compose: typeof draft.compose === 'string' ? draft.compose : '',
        nginx: typeof draft.nginx === 'string' ? draft.nginx : '',
    };
}
