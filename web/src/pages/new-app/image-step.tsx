import { useId, useState } from 'preact/hooks';

import { api, type ApiError, asApiError, useApi } from '../../api.ts';
import { Badge, type BadgeLevel } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Field } from '../../components/Field.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { methodWords } from '../../words.ts';

/** What the app is made from: an image and its tag, or a catalog template. */
export interface ImageChoice {
    image: string;
    tag: string;
    templateId: string;
    /** How the template is called, for the summary. */
    templateTitle: string;
}

interface CatalogEntry {
    id: string;
    title: string;
    description: string;
    image: string | null;
    method: string | null;
    level: string | null;
    source: string;
    category: string | null;
}

interface HubRepository {
    name: string;
    description: string;
    starCount: number;
    pullCount: number;
    pullCountText: string | null;
    official: boolean;
    badge: string | null;
}

interface TagList {
    repository: string;
    total: number;
    complete: boolean;
    tags: Array<{ name: string; updatedAt: string | null }>;
}

type Source = 'typed' | 'catalog' | 'hub';

const SOURCES: Array<{ id: Source; label: string }> = [
    { id: 'typed', label: 'Type an image' },
    { id: 'catalog', label: 'From the catalog' },
    { id: 'hub', label: 'Search Docker Hub' },
];

/** An image reference with a tag (`nginx:1.27`) is split; the tag field takes the tag. */
function splitTag(reference: string): { image: string; tag?: string } {
    const slash = reference.lastIndexOf('/');
    const colon = reference.lastIndexOf(':');
    return colon > slash ? { image: reference.slice(0, colon), tag: reference.slice(colon + 1) } : { image: reference };
}

function TagPicker(props: { image: string; tag: string; onTag: (tag: string) => void }) {
    const id = useId();
    const [tags, setTags] = useState<TagList | undefined>(undefined);
    const [loading, setLoading] = useState(false);
    const [error, setError] = useState<ApiError | undefined>(undefined);
    const load = async () => {
        setLoading(true);
        setError(undefined);
        try {
            setTags(await api.get<TagList>(`/api/hub/tags?repo=${encodeURIComponent(props.image)}`));
        } catch (failure) {
            setError(asApiError(failure));
        } finally {
            setLoading(false);
        }
    };

    return (
        <div class="tag-picker">
            <Field
                label="Tag"
                value={props.tag}
                spellcheck={false}
                hint="Empty: latest (lint warns about it)."
                onInput={(tag) => props.onTag(tag.trim())}
            />
            <Button busy={loading} disabled={props.image.trim() === ''} onClick={() => void load()}>
                List the tags of {props.image || 'the image'}
            </Button>
            <ErrorText error={error} />
            {tags ? (
                <div class="field">
                    <label for={`${id}-tags`}>
                        Tags of {tags.repository} ({tags.tags.length}
                        {tags.complete ? '' : ` of ${tags.total}`})
                    </label>
                    <select id={`${id}-tags`} value={props.tag} onChange={(event) => props.onTag(event.currentTarget.value)}>
                        <option value="">(choose a tag)</option>
                        {tags.tags.map((tag) => (
                            <option key={tag.name} value={tag.name}>
                                {tag.name}
                                {tag.updatedAt ? ` (${tag.updatedAt.slice(0, 10)})` : ''}
                            </option>
                        ))}
                    </select>
                </div>
            ) : null}
        </div>
    );
}

/** Whether the entry is one the search asks for: every word in its title, description, image or category. */
function matchesSearch(entry: CatalogEntry, words: string[]): boolean {
    const text = [entry.title, entry.description, entry.image ?? '', entry.category ?? ''].join(' ').toLowerCase();
    return words.every((word) => text.includes(word));
}

function CatalogList(props: { chosen: string; onPick: (entry: CatalogEntry) => void }) {
    const catalog = useApi<{ templates: CatalogEntry[]; sources: Array<{ source: string; error: string | null }> }>('/api/catalog');
    const categoryId = useId();
    const [query, setQuery] = useState('');
    const [category, setCategory] = useState('');
    if (catalog.loading) {
        return <Spinner label="Reading the catalog…" />;
    }

    if (!catalog.data) {
        return <ErrorText error={catalog.error} />;
    }

    const templates = catalog.data.templates;
    const categories = [...new Set(templates.flatMap((entry) => (entry.category ? [entry.category] : [])))].sort();
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    const shown = templates.filter((entry) => (category === '' || entry.category === category) && matchesSearch(entry, words));
    return (
        <div class="catalog">
            {catalog.data.sources
                .filter((source) => source.error)
                .map((source) => (
                    <p key={source.source} class="error-text">
                        {source.source} could not be read: {source.error}
                    </p>
                ))}
            {templates.length === 0 ? (
                <p>The catalog has no templates: type an image or search for one.</p>
            ) : (
                <div class="catalog-filters" role="search" aria-label="The catalog">
                    <Field label="Search the catalog" type="search" value={query} spellcheck={false} onInput={setQuery} />
                    <div class="field">
                        <label for={categoryId}>Category</label>
                        <select id={categoryId} value={category} onChange={(event) => setCategory(event.currentTarget.value)}>
                            <option value="">All categories</option>
                            {categories.map((name) => (
                                <option key={name} value={name}>
                                    {name}
                                </option>
                            ))}
                        </select>
                    </div>
                    <p class="catalog-count" aria-live="polite">
                        {shown.length === templates.length
                            ? `${templates.length} templates`
                            : `${shown.length} of ${templates.length} templates`}
                    </p>
                </div>
            )}
            {templates.length > 0 && shown.length === 0 ? <p>No template matches: try other words or all categories.</p> : null}
            <ul class="catalog-list" aria-label="Templates">
                {shown.map((entry) => (
                    <li key={entry.id} class={props.chosen === entry.id ? 'catalog-entry catalog-chosen' : 'catalog-entry'}>
                        <p>
                            <strong>{entry.title}</strong> {entry.image ? <code>{entry.image}</code> : null}{' '}
                            {entry.method ? <span class="catalog-method">{methodWords(entry.method)}</span> : null}{' '}
                            {entry.level ? <Badge level={entry.level as BadgeLevel} /> : null}
                        </p>
                        {entry.category || entry.description ? (
                            <p class="catalog-description">{[entry.category, entry.description].filter(Boolean).join(' · ')}</p>
                        ) : null}
                        <Button
                            variant={props.chosen === entry.id ? 'primary' : 'secondary'}
                            aria-label={`${props.chosen === entry.id ? 'Chosen' : 'Use this template'}: ${entry.title}`}
                            onClick={() => props.onPick(entry)}
                        >
                            {props.chosen === entry.id ? 'Chosen' : 'Use this template'}
                        </Button>
                    </li>
                ))}
            </ul>
        </div>
    );
}

function HubSearch(props: { onPick: (name: string) => void }) {
    const [query, setQuery] = useState('');
    const [results, setResults] = useState<{ results: HubRepository[]; total: number } | undefined>(undefined);
    const [searching, setSearching] = useState(false);
    const [error, setError] = useState<ApiError | undefined>(undefined);
    const search = async () => {
        setSearching(true);
        setError(undefined);
        try {
            setResults(await api.get(`/api/hub/search?q=${encodeURIComponent(query.trim())}`));
        } catch (failure) {
            setError(asApiError(failure));
        } finally {
            setSearching(false);
        }
    };

    return (
        <div class="hub-search">
            <form
                role="search"
                onSubmit={(event) => {
                    event.preventDefault();
                    void search();
                }}
            >
                <Field label="Search Docker Hub" type="search" value={query} onInput={setQuery} />
                <Button type="submit" busy={searching} disabled={query.trim() === ''}>
                    Search
                </Button>
            </form>
            <ErrorText error={error} />
            {results ? (
                <ul class="hub-results" aria-label={`${results.total} repositories found`}>
                    {results.results.map((repository) => (
                        <li key={repository.name}>
                            <p>
                                <strong>{repository.name}</strong> {repository.official ? <Badge tone="good">official</Badge> : null}{' '}
                                <span class="hub-counts">
                                    {repository.starCount} stars, {repository.pullCountText ?? repository.pullCount} pulls
                                </span>
                            </p>
                            {repository.description ? <p class="catalog-description">{repository.description}</p> : null}
                            <Button aria-label={`Choose ${repository.name}`} onClick={() => props.onPick(repository.name)}>
                                Choose
                            </Button>
                        </li>
                    ))}
                </ul>
            ) : null}
        </div>
    );
}

export interface ImageStepProps {
    choice: ImageChoice;
    onChange: (choice: ImageChoice) => void;
    onBack: () => void;
    onCreate: () => Promise<void>;
}

/** The image: typed with its tag, a template of the catalog, or found on Docker Hub with its tags. */
export function ImageStep(props: ImageStepProps) {
    const [source, setSource] = useState<Source>(props.choice.templateId ? 'catalog' : 'typed');
    // What the person typed, shown as typed: a tag written after the image moves to the tag field's value only.
    const [typed, setTyped] = useState(props.choice.image);
    const [creating, setCreating] = useState(false);
    const [error, setError] = useState<ApiError | undefined>(undefined);
    const { choice } = props;
    const set = (patch: Partial<ImageChoice>) => props.onChange({ ...choice, ...patch });
    const ready = choice.templateId !== '' || choice.image.trim() !== '';
    const create = async () => {
        setCreating(true);
        setError(undefined);
        try {
            await props.onCreate();
        } catch (failure) {
            setError(asApiError(failure));
            setCreating(false);
        }
    };

    return (
        <div class="wizard-form">
            <fieldset class="source-switch">
                <legend>Where the image comes from</legend>
                {SOURCES.map((option) => (
                    <label key={option.id} class="source-option">
                        <input type="radio" name="image-source" checked={source === option.id} onChange={() => setSource(option.id)} />{' '}
                        {option.label}
                    </label>
                ))}
            </fieldset>
            {source === 'catalog' ? (
                <CatalogList
                    chosen={choice.templateId}
                    onPick={(entry) => props.onChange({ image: '', tag: '', templateId: entry.id, templateTitle: entry.title })}
                />
            ) : (
                <>
                    {source === 'hub' ? (
                        <HubSearch
                            onPick={(name) => {
                                setTyped(name);
                                set({ image: name, tag: '', templateId: '', templateTitle: '' });
                            }}
                        />
                    ) : null}
                    <Field
                        label="Image"
                        value={typed}
                        spellcheck={false}
                        placeholder="nginx, ghcr.io/owner/app, registry.example:5000/team/app"
                        onInput={(text) => {
                            setTyped(text);
                            const { image, tag } = splitTag(text.trim());
                            set({ image, ...(tag !== undefined ? { tag } : {}), templateId: '', templateTitle: '' });
                        }}
                    />
                    <TagPicker key={choice.image} image={choice.image} tag={choice.tag} onTag={(tag) => set({ tag })} />
                </>
            )}
            <p class="wizard-summary" aria-live="polite">
                {choice.templateId
                    ? `The app will be made from the template ${choice.templateTitle}.`
                    : choice.image
                      ? `The app will run ${choice.image}:${choice.tag || 'latest'}.`
                      : 'No image chosen yet.'}
            </p>
            <div class="wizard-actions">
                <Button onClick={props.onBack}>Back</Button>
                <Button variant="primary" busy={creating} disabled={!ready} onClick={() => void create()}>
                    Create the draft
                </Button>
            </div>
            <ErrorText error={error} />
        </div>
    );
}
