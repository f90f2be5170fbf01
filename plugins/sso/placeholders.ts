/**
 * The placeholders an app's compose file (and, later, its recipe) may hold, filled when a run writes the file:
 * `{{URL}}`, `{{FQDN}}`, `{{IDP_URL}}`, `{{ADMIN_USER}}` and, with OpenID Connect, `{{OIDC_ISSUER}}`,
 * `{{OIDC_CONFIG_URL}}`, `{{OIDC_LOGOUT_URL}}`, `{{OIDC_CLIENT_ID}}`, `{{OIDC_CLIENT_SECRET}}`. The client secret is
 * never written into the compose file: its placeholder becomes `${OIDC_CLIENT_SECRET}`, which Compose reads from the
 * app's secrets file. Values are filled as values (lib/placeholder-fill.ts): in the compose file's values only, each
 * one YAML scalar; in a recipe's commands as environment variables.
 */
import { PLACEHOLDER } from '../../lib/placeholder-fill.ts';
import { CLIENT_SECRET_VARIABLE, type MethodSettings } from './method-types.ts';

export { fillCommandPlaceholders, fillYamlPlaceholders } from '../../lib/placeholder-fill.ts';

/** Every placeholder a compose file or a recipe may hold (the seed's list); any other name is a mistake. */
export const PLACEHOLDER_NAMES = [
    'URL',
    'FQDN',
    'OIDC_ISSUER',
    'OIDC_CONFIG_URL',
    'OIDC_LOGOUT_URL',
    'OIDC_CLIENT_ID',
    'OIDC_CLIENT_SECRET',
    'GATEWAY',
    'IDP_URL',
    'ADMIN_USER',
    'ADMIN_EMAIL',
] as const;

/** The placeholder names a text holds, each once. */
export function placeholdersIn(text: string): string[] {
    return [...new Set([...text.matchAll(PLACEHOLDER)].map((match) => match[1] ?? ''))];
}

export function placeholderValues(settings: MethodSettings): Record<string, string> {
    const oidc = settings.oidc;
    return {
        URL: settings.origin,
        FQDN: settings.domain,
        ...(settings.idpUrl ? { IDP_URL: settings.idpUrl } : {}),
        ...(settings.adminUser ? { ADMIN_USER: settings.adminUser } : {}),
        ...(settings.adminEmail ? { ADMIN_EMAIL: settings.adminEmail } : {}),
        ...(oidc
            ? {
                  OIDC_ISSUER: oidc.endpoints.issuer,
                  OIDC_CONFIG_URL: oidc.endpoints.configUrl,
                  OIDC_LOGOUT_URL: oidc.endpoints.logoutUrl,
                  OIDC_CLIENT_ID: oidc.clientId,
                  OIDC_CLIENT_SECRET: `\${${CLIENT_SECRET_VARIABLE}}`,
              }
            : {}),
    };
}

/** The secret placeholders with the secrets themselves, for a command run once in the container (never for a file). */
export function openedSecretValues(secrets: Record<string, string>): Record<string, string> {
    const clientSecret = secrets[CLIENT_SECRET_VARIABLE];
    return clientSecret ? { OIDC_CLIENT_SECRET: clientSecret } : {};
}
