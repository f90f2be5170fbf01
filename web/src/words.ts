/**
 * The one place where the API's identifiers become words for people: sign-in method ids, audit actions, and the
 * field names the API puts in front of its messages. Pages show these words, never the raw ids.
 */

const METHOD_WORDS: Record<string, string> = {
    oidc: 'OpenID Connect',
    saml: 'SAML 2.0',
    header: 'Username from the proxy',
    basic: 'HTTP Basic with one shared account',
    autologin: 'Auto-login with one shared account',
    none: "No login in the app after the provider's",
    own: "The app's own login",
};

/** A sign-in method in words; an unknown id (a method added since) as itself. */
export function methodWords(method: string): string {
    return METHOD_WORDS[method] ?? method;
}

const METHOD_EXPLANATIONS: Record<string, string> = {
    oidc: 'The app asks the identity provider who the visitor is over OpenID Connect, so nobody types a password into the app.',
    saml: 'The identity provider vouches for the visitor to the app with a signed SAML answer.',
    header: "nginx passes the signed-in visitor's user name in a header, which the app trusts as its login.",
    basic: 'nginx hands the app one shared user name and password over HTTP Basic, so every visitor is that one account.',
    autologin: "Gatehouse signs in to the app's own login page with one shared account and hands the visitor that session.",
    none: "The app's recipe turns its own login off, so the identity provider's check is the only door.",
    own: "Visitors pass the identity provider's check, then sign in to the app with the app's own accounts.",
};

/** One sentence on what a sign-in method does for a visitor; undefined for a method added since. */
export function methodExplanation(method: string): string | undefined {
    return METHOD_EXPLANATIONS[method];
}

const RUN_WORDS: Record<string, string> = {
    deploy: 'deploy',
    compose: 'compose file change',
    nginx: 'nginx site change',
    action: 'action',
    delete: 'delete',
    sso: 'sign-in method change',
};

const AUDIT_WORDS: Record<string, string> = {
    'setup.complete': 'First administrator created',
    'auth.login': 'Sign-in',
    'auth.logout': 'Sign-out',
    'auth.password': 'Password sign-in',
    'auth.mfa': 'Two-factor code',
    'auth.oidc': 'Sign-in through the identity provider',
    'account.password': 'Own password changed',
    'account.profile': 'Own profile changed',
    'account.totp.enable': 'Two factors turned on',
    'account.totp.disable': 'Two factors turned off',
    'account.totp.recovery-codes': 'New recovery codes made',
    'account.session.end': 'Own session ended',
    'users.create': 'User added',
    'users.update': 'User changed',
    'users.delete': 'User deleted',
    'settings.oidc': 'OIDC sign-in settings changed',
    'apps.create': 'App created',
    'apps.draft': 'App draft changed',
    'apps.access': 'App access changed',
    'apps.autologin': 'Auto-login',
    'apps.recipe': 'Recipe saved',
    'terminal.session': 'Terminal session',
};

/** An audit action in words: `runs.<kind>` and `runs.<kind>.end` name the run; an unknown action as itself. */
export function auditActionWords(action: string): string {
    const known = AUDIT_WORDS[action];
    if (known !== undefined) {
        return known;
    }

    const run = /^runs\.([a-z]+)(\.end)?$/.exec(action);
    if (run?.[1] !== undefined) {
        const what = RUN_WORDS[run[1]] ?? run[1];
        return run[2] ? `Run ended (${what})` : `Run started (${what})`;
    }

    return action;
}

/** The audit actions to filter by, in words, runs included. */
export function auditActionChoices(): { value: string; label: string }[] {
    const runs = Object.keys(RUN_WORDS).flatMap((kind) => [`runs.${kind}`, `runs.${kind}.end`]);
    return [...Object.keys(AUDIT_WORDS), ...runs].map((action) => ({ value: action, label: auditActionWords(action) }));
}

/** A leading field name, as the API writes it ("code: the code is not valid"): an identifier, then a colon. */
const FIELD_PREFIX = /^[a-z][A-Za-z0-9]*(?:\.[A-Za-z0-9]+)*: (?=\S)/;

/** The API's message without the field name in front, which the page shows by placing the message at the field. */
export function withoutFieldName(message: string): string {
    const rest = message.replace(FIELD_PREFIX, '');
    return rest === message ? message : `${rest.charAt(0).toUpperCase()}${rest.slice(1)}`;
}
