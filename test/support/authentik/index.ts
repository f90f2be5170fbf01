/**
 * An authentik stand-in for tests: the admin API Gatehouse calls, checked against authentik's schema both ways, the
 * embedded outpost's forward auth with a sign-in page, a real OpenID provider behind each OAuth2 provider and a real
 * SAML IdP behind each SAML provider. See stand-in.ts; `ForwardAuthBrowser` plays a browser behind the documented
 * nginx snippet.
 */
export { AuthentikStandIn, DEFAULT_VERSION, startAuthentikStandIn, type StandInOptions, type StandInState } from './stand-in.ts';
export type { StandInUser } from './directory.ts';
export type { RecordedRequest } from './server.ts';
export type { FailureRule } from './failures.ts';
export { type BrowserOptions, type BrowserResponse, ForwardAuthBrowser, type Visit } from './browser.ts';
