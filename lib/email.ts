const EMAIL_PATTERN =
    /^[\w.!#$%&'*+/=?^`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/** An e-mail address as Gitea accepts one: at most 254 characters, a dot-atom local part, a host name, no leading dash. */
export function isValidEmail(email: string): boolean {
    return email.length <= 254 && EMAIL_PATTERN.test(email) && !email.startsWith('-');
}
