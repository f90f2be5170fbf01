import type { ComponentChildren } from 'preact';
import { useId, useState } from 'preact/hooks';

import { useApi } from '../../api.ts';
import { Badge, type BadgeLevel } from '../../components/Badge.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Field } from '../../components/Field.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { AdminUserField } from './admin-user.tsx';
import type { App, EvidenceSource, MethodOption, RecipeChanges } from './types.ts';
import { methodExplanation, methodWords } from '../../words.ts';
import { SelectField } from '../admin/select-field.tsx';

/** What the person chose: the draft's `account` and the fields its method needs. */
export interface MethodChoice {
    account: string;
    adminUser?: string;
    sharedUser?: string;
    /** Typed here and sent; never shown back (the API never returns it). */
    sharedPassword?: string;
    samlAcs?: string;
    samlAudience?: string;
    loginAdapter?: string;
    loginPath?: string;
}

/** Nothing chosen and no recipe to decide: the app keeps its own login, so that is the choice shown. */
function accountOf(app: App): string {
    const account = app.draft.account ?? '';
    return account === '' && app.identity && !app.identity.recipe ? 'own' : account;
}

export function choiceFromApp(app: App): MethodChoice {
    return {
        account: accountOf(app),
        adminUser: app.draft.adminUser ?? '',
        sharedUser: app.draft.sharedUser ?? '',
        sharedPassword: '',
        samlAcs: app.draft.samlAcs ?? '',
        samlAudience: app.draft.samlAudience ?? '',
        loginAdapter: app.draft.login?.adapter ?? '',
        loginPath: app.draft.login?.path ?? '',
    };
}

/** The fields of the choice as the draft and `POST /api/apps/{name}/sso` take them; empty ones left out. */
export function choicePayload(choice: MethodChoice, options: { withAdminUser: boolean }): Record<string, unknown> {
    const payload: Record<string, unknown> = { account: choice.account };
    const copy = (key: 'adminUser' | 'sharedUser' | 'sharedPassword' | 'samlAcs' | 'samlAudience') => {
        const value = choice[key]?.trim();
        if (value) {
            payload[key] = value;
        }
    };
    copy('sharedUser');
    copy('sharedPassword');
    copy('samlAcs');
    copy('samlAudience');
    if (options.withAdminUser) {
        copy('adminUser');
    }

    if (choice.account === 'autologin' && choice.loginAdapter) {
        payload.login = { adapter: choice.loginAdapter, ...(choice.loginPath ? { path: choice.loginPath } : {}) };
    }

    return payload;
}

function Sources(props: { sources: EvidenceSource[] }) {
    if (props.sources.length === 0) {
        return null;
    }

    return (
        <ul class="method-sources">
            {props.sources.map((source, index) => (
                <li key={index}>
                    {source.url ? (
                        <a href={source.url} target="_blank" rel="noopener noreferrer">
                            {source.what}
                        </a>
                    ) : (
                        source.what
                    )}
                </li>
            ))}
        </ul>
    );
}

/** What choosing this option's recipe would write into the app, for review: a saved recipe carries another app's choices. */
function RecipeReview(props: { changes: RecipeChanges }) {
    const { changes } = props;
    const env = Object.entries(changes.env);
    return (
        <details class="recipe-review" open={changes.problems.length > 0}>
            <summary>What the recipe {changes.title} changes</summary>
            <p class="method-note">From {changes.from}.</p>
            {changes.problems.length > 0 ? (
                <ul class="recipe-problems" role="alert">
                    {changes.problems.map((problem) => (
                        <li key={problem}>Cannot be applied: {problem}</li>
                    ))}
                </ul>
            ) : null}
            <dl class="recipe-changes">
                {changes.login ? (
                    <>
                        <dt>Signs in through</dt>
                        <dd>
                            {changes.login.adapter === 'form' ? 'the login form' : changes.login.adapter}
                            {changes.login.path ? (
                                <>
                                    {' '}
                                    at <code>{changes.login.path}</code>
                                </>
                            ) : null}
                        </dd>
                    </>
                ) : null}
                {changes.samlAcs ? (
                    <>
                        <dt>Opens without the provider's check</dt>
                        <dd>
                            <code>{changes.samlAcs}</code> (the SAML answer's address)
                        </dd>
                    </>
                ) : null}
                {changes.redirect ? (
                    <>
                        <dt>Sign-in answers go to</dt>
                        <dd>
                            <code>{changes.redirect}</code>
                        </dd>
                    </>
                ) : null}
                {env.length > 0 ? (
                    <>
                        <dt>Sets in the app's settings</dt>
                        <dd>
                            <ul>
                                {env.map(([name, value]) => (
                                    <li key={name}>
                                        <code>{name}</code> = <code>{value}</code>
                                    </li>
                                ))}
                            </ul>
                        </dd>
                    </>
                ) : null}
                {changes.remove.length > 0 ? (
                    <>
                        <dt>Takes out of the app's settings</dt>
                        <dd>
                            {changes.remove.map((name) => (
                                <code key={name}>{name} </code>
                            ))}
                        </dd>
                    </>
                ) : null}
                {changes.init.length > 0 ? (
                    <>
                        <dt>Runs once inside the app</dt>
                        <dd>
                            <ul>
                                {changes.init.map((command) => (
                                    <li key={command}>
                                        <code>{command}</code>
                                    </li>
                                ))}
                            </ul>
                        </dd>
                    </>
                ) : null}
                {changes.steps.length > 0 ? (
                    <>
                        <dt>Asks you to do once in the app</dt>
                        <dd>
                            <ol>
                                {changes.steps.map((step) => (
                                    <li key={step}>{step}</li>
                                ))}
                            </ol>
                        </dd>
                    </>
                ) : null}
            </dl>
        </details>
    );
}

function OptionRow(props: { option: MethodOption; name: string; checked: boolean; disabled: boolean; onPick: () => void }) {
    const id = `${props.name}-${props.option.method}`;
    const { option } = props;
    return (
        <li class={props.checked ? 'method method-chosen' : 'method'} data-method={option.method}>
            <input id={id} type="radio" name={props.name} checked={props.checked} disabled={props.disabled} onChange={props.onPick} />{' '}
            <label for={id}>
                <strong>{option.title}</strong>
            </label>{' '}
            {option.level ? <Badge level={option.level as BadgeLevel} /> : null}
            {option.recommended ? <Badge tone="good">recommended</Badge> : null}
            {option.paidOnly ? <Badge tone="warning">paid edition only</Badge> : null}
            <MethodExplanation method={option.method} />
            {option.section === 'last-resort' ? (
                <p class="method-note">
                    The last resort: no single sign-on is known for this app, so Gatehouse signs in with a shared account.
                </p>
            ) : null}
            <Sources sources={option.sources} />
            {option.applies ? <RecipeReview changes={option.applies} /> : null}
        </li>
    );
}

function MethodExplanation(props: { method: string }) {
    const explanation = methodExplanation(props.method);
    return explanation ? <p class="method-note method-explanation">{explanation}</p> : null;
}

function OptionList(props: { options: MethodOption[]; name: string; chosen: string; disabled: boolean; onPick: (method: string) => void }) {
    return (
        <ul class="method-list">
            {props.options.map((option) => (
                <OptionRow
                    key={option.method}
                    option={option}
                    name={props.name}
                    checked={props.chosen === option.method}
                    disabled={props.disabled}
                    onPick={() => props.onPick(option.method)}
                />
            ))}
        </ul>
    );
}

interface Detection {
    image: string;
    recipe: { id: string; title: string; level: string; method: string; match: string } | null;
    evidence: Array<{
        method: string;
        level: BadgeLevel;
        sources: EvidenceSource[];
        flags: { paidOnly: boolean; informationOnly: boolean; unverified: boolean; recipe?: string };
    }>;
    inspection?: { ok: boolean; error?: string };
}

function EvidenceList(props: { image: string }) {
    const detection = useApi<Detection>(`/api/sso/detect?image=${encodeURIComponent(props.image)}`);
    if (detection.loading) {
        return <Spinner label="Reading the evidence (the image's registry is asked too)…" />;
    }

    if (!detection.data) {
        return <ErrorText error={detection.error} />;
    }

    const { recipe, evidence, inspection } = detection.data;
    return (
        <div class="evidence">
            <p>
                {recipe
                    ? `Recipe ${recipe.title} (${methodWords(recipe.method)}, ${recipe.level}), matched by ${recipe.match}.`
                    : 'No recipe matches this image.'}
            </p>
            {inspection ? (
                <p>
                    {inspection.ok
                        ? "The image's variables and labels were read."
                        : `The image could not be inspected: ${inspection.error ?? 'no answer'}.`}
                </p>
            ) : null}
            {evidence.length === 0 ? <p>Nothing is known about how this app signs visitors in.</p> : null}
            <ul class="method-list">
                {evidence.map((item) => (
                    <li key={item.method} class="method">
                        {methodWords(item.method)} <Badge level={item.level} />
                        {item.flags.paidOnly ? <Badge tone="warning">paid edition only</Badge> : null}
                        {item.flags.informationOnly ? <Badge tone="neutral">information only</Badge> : null}
                        {item.flags.unverified ? <Badge tone="warning">unverified</Badge> : null}
                        <Sources sources={item.sources} />
                    </li>
                ))}
            </ul>
        </div>
    );
}

/** Why these methods: `GET /api/sso/detect`, asked when the person opens it (it may ask the image's registry). */
export function EvidenceDetail(props: { image: string }) {
    const [open, setOpen] = useState(false);
    return (
        <details class="evidence-detail" onToggle={(event) => setOpen(event.currentTarget.open)}>
            <summary>The evidence for {props.image}</summary>
            {open ? <EvidenceList image={props.image} /> : null}
        </details>
    );
}

interface AutoLoginAdapters {
    adapters: Array<{ name: string; title: string }>;
}

/** How Gatehouse signs in to the app for auto-login: one of the adapters the server has, or the default. */
function AdapterField(props: { value: string; onChange: (adapter: string) => void }) {
    const listed = useApi<AutoLoginAdapters>('/api/sso/autologin-adapters');
    if (!listed.data) {
        return listed.loading ? <Spinner label="Reading the auto-login adapters…" /> : <ErrorText error={listed.error} />;
    }

    const options = [
        { value: '', label: "The recipe's, else a classic HTML login form" },
        ...listed.data.adapters.map((adapter) => ({ value: adapter.name, label: adapter.title })),
    ];
    return <SelectField label="How Gatehouse signs in to the app" value={props.value} options={options} onChange={props.onChange} />;
}

function NeededFields(props: {
    option: MethodOption | undefined;
    choice: MethodChoice;
    app: App;
    withAdminUser: boolean;
    onChange: (patch: Partial<MethodChoice>) => void;
}) {
    const needs = new Set(props.option?.needs ?? []);
    const method = props.choice.account;
    const fields: ComponentChildren[] = [];
    if (props.withAdminUser && (needs.has('adminUser') || method === 'oidc')) {
        fields.push(
            <AdminUserField key="admin" value={props.choice.adminUser ?? ''} onChange={(adminUser) => props.onChange({ adminUser })} />,
        );
    }

    if (needs.has('sharedUser')) {
        fields.push(
            <Field
                key="user"
                label="Shared account: user name"
                value={props.choice.sharedUser ?? ''}
                autocomplete="off"
                onInput={(sharedUser) => props.onChange({ sharedUser })}
            />,
        );
    }

    if (needs.has('sharedPassword')) {
        fields.push(
            <Field
                key="password"
                label="Shared account: password"
                type="password"
                autocomplete="new-password"
                value={props.choice.sharedPassword ?? ''}
                hint={
                    props.app.draft.hasSharedPassword
                        ? 'A password is saved (it is never shown); leave this empty to keep it.'
                        : 'Kept sealed; it is never shown again.'
                }
                onInput={(sharedPassword) => props.onChange({ sharedPassword })}
            />,
        );
    }

    if (needs.has('samlAcs') || method === 'saml') {
        fields.push(
            <Field
                key="acs"
                label="The app's SAML assertion consumer path"
                value={props.choice.samlAcs ?? ''}
                placeholder="/saml/acs"
                onInput={(samlAcs) => props.onChange({ samlAcs })}
            />,
            <Field
                key="audience"
                label="SAML audience (optional)"
                value={props.choice.samlAudience ?? ''}
                onInput={(samlAudience) => props.onChange({ samlAudience })}
            />,
        );
    }

    if (method === 'autologin') {
        fields.push(
            <AdapterField
                key="adapter"
                value={props.choice.loginAdapter ?? ''}
                onChange={(loginAdapter) => props.onChange({ loginAdapter })}
            />,
            <Field
                key="path"
                label="The app's login page (optional)"
                value={props.choice.loginPath ?? ''}
                placeholder="/login"
                onInput={(loginPath) => props.onChange({ loginPath })}
            />,
        );
    }

    return fields.length > 0 ? <div class="method-fields">{fields}</div> : null;
}

export interface SignInChooserProps {
    app: App;
    choice: MethodChoice;
    onChange: (choice: MethodChoice) => void;
    /** The admin account is asked here (the account card); the wizard asks it with the access groups. */
    withAdminUser?: boolean;
    disabled?: boolean;
}

/**
 * The sign-in methods in the API's order, each with its level and sources: the recommended and evidenced ones
 * first, the rest behind "Show all methods", and the app's own login apart, as it is not single sign-on.
 */
export function SignInChooser(props: SignInChooserProps) {
    const name = `method-${useId()}`;
    const moreId = `${name}-more`;
    const options = props.app.identity?.options ?? [];
    // A method with evidence is shown with its badge, whatever its section; only those without any wait behind "Show all".
    const hiddenAtFirst = (option: MethodOption) => option.section === 'more' && option.level === null;
    const main = options.filter((option) => option.section !== 'own' && !hiddenAtFirst(option));
    const more = options.filter(hiddenAtFirst);
    const own = options.filter((option) => option.section === 'own');
    const recipe = props.app.identity?.recipe;
    // With no recipe, nothing chosen is the app's own login: one entry says it, not two.
    const chosen = props.choice.account === '' && !recipe ? 'own' : props.choice.account;
    const [showAll, setShowAll] = useState(() => more.some((option) => option.method === chosen));
    const disabled = props.disabled === true;
    const pick = (account: string) => props.onChange({ ...props.choice, account });
    const defaultId = `${name}-default`;

    return (
        <div class="sign-in-chooser">
            <fieldset class="method-group">
                <legend>Single sign-on through the identity provider</legend>
                {recipe ? (
                    <p class="method method-default">
                        <input
                            id={defaultId}
                            type="radio"
                            name={name}
                            checked={chosen === ''}
                            disabled={disabled}
                            onChange={() => pick('')}
                        />{' '}
                        <label for={defaultId}>
                            The app's recipe decides ({recipe.title}: {methodWords(props.app.identity?.method ?? '') || 'its method'})
                        </label>
                    </p>
                ) : null}
                {main.length === 0 ? <p class="method-note">No evidence names a single sign-on method for this image.</p> : null}
                <OptionList options={main} name={name} chosen={chosen} disabled={disabled} onPick={pick} />
                {more.length > 0 ? (
                    <>
                        <button
                            type="button"
                            class="button button-link"
                            aria-expanded={showAll ? 'true' : 'false'}
                            aria-controls={moreId}
                            onClick={() => setShowAll(!showAll)}
                        >
                            {showAll ? 'Show fewer methods' : `Show all methods (${more.length} more)`}
                        </button>
                        <div id={moreId} hidden={!showAll}>
                            <OptionList options={more} name={name} chosen={chosen} disabled={disabled} onPick={pick} />
                        </div>
                    </>
                ) : null}
            </fieldset>
            {own.length > 0 ? (
                <fieldset class="method-group method-own">
                    <legend>The app's own login (not single sign-on)</legend>
                    <OptionList options={own} name={name} chosen={chosen} disabled={disabled} onPick={pick} />
                </fieldset>
            ) : null}
            {(props.app.identity?.information ?? []).length > 0 ? (
                <div class="method-information">
                    <p class="model-subheading">Also known (information only)</p>
                    <ul>
                        {(props.app.identity?.information ?? []).map((item) => (
                            <li key={item.method}>
                                {methodWords(item.method)}
                                <Sources sources={item.sources} />
                            </li>
                        ))}
                    </ul>
                </div>
            ) : null}
            <NeededFields
                option={options.find((option) => option.method === chosen)}
                choice={props.choice}
                app={props.app}
                withAdminUser={props.withAdminUser === true}
                onChange={(patch) => props.onChange({ ...props.choice, ...patch })}
            />
        </div>
    );
}
