/**
 * The stand-in's HTML pages: authentik's are a single-page app driven by its flow executor API, so these keep only
 * what a test (or a person) needs: a sign-in form with the identification stage's field names, and the flow
 * executor's words for a denied request.
 */
import { escapeHtml } from './http.ts';

function page(title: string, content: string): string {
    return [
        '<!DOCTYPE html>',
        '<html lang="en">',
        '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
        `<title>${escapeHtml(title)}</title></head>`,
        `<body><main><h1>${escapeHtml(title)}</h1>`,
        content,
        '</main></body></html>',
    ].join('\n');
}

export function loginPage(options: { error?: string; username?: string } = {}): string {
    return page(
        'Sign in',
        [
            options.error ? `<p role="alert" class="error">${escapeHtml(options.error)}</p>` : '',
            '<form method="post">',
            '<label for="uid_field">Username</label>',
            `<input id="uid_field" name="uid_field" type="text" autocomplete="username" required value="${escapeHtml(options.username ?? '')}">`,
            '<label for="password">Password</label>',
            '<input id="password" name="password" type="password" autocomplete="current-password" required>',
            '<button type="submit">Log in</button>',
            '</form>',
        ].join('\n'),
    );
}

export function deniedPage(): string {
    return page('Permission denied', '<p>Request has been denied.</p>');
}

export function messagePage(title: string, message: string): string {
    return page(title, `<p>${escapeHtml(message)}</p>`);
}

/** The page that confirms an RP-initiated logout: `form` is the OpenID provider's own hidden form, posted by the button. */
export function logoutPage(form: string, application: string): string {
    return page(
        'Log out',
        [
            `<p>Log out of ${escapeHtml(application)}?</p>`,
            form,
            '<button type="submit" form="op.logoutForm" value="yes" name="logout">Log out</button>',
        ].join('\n'),
    );
}
