import '../../editors/editors.css';
import '../app/app.css';
import './new-app.css';

import { useState } from 'preact/hooks';

import { api, type ApiError, asApiError, canEdit, useApi, useSession } from '../../api.ts';
import { ErrorText } from '../../components/ErrorText.tsx';
import { Spinner } from '../../components/Spinner.tsx';
import { usePageTitle } from '../../layout/page-title.ts';
import { Link, navigate, useLocation } from '../../router.tsx';
import type { App } from '../app/types.ts';
import { type ImageChoice, ImageStep } from './image-step.tsx';
import { NameStep } from './name-step.tsx';
import { DraftSteps } from './draft-steps.tsx';
import { STEPS, type StepId, stepTitle } from './steps.ts';

function StepNav(props: { current: StepId; reachable: (step: StepId) => boolean; onGo: (step: StepId) => void }) {
    return (
        <nav class="wizard-steps" aria-label="Steps">
            <ol>
                {STEPS.map((step, index) => {
                    const current = step.id === props.current;
                    return (
                        <li key={step.id} class={current ? 'wizard-step wizard-step-current' : 'wizard-step'}>
                            <button
                                type="button"
                                class="wizard-step-button"
                                aria-current={current ? 'step' : undefined}
                                disabled={!current && !props.reachable(step.id)}
                                onClick={() => props.onGo(step.id)}
                            >
                                <span class="wizard-step-number">{index + 1}</span> {step.title}
                            </button>
                        </li>
                    );
                })}
            </ol>
        </nav>
    );
}

/** Before the draft exists: the name, then the image; creating the draft moves on to its own steps. */
function StartWizard() {
    const [step, setStep] = useState<'name' | 'image'>('name');
    const [name, setName] = useState('');
    const [title, setTitle] = useState('');
    const [image, setImage] = useState<ImageChoice>({ image: '', tag: '', templateId: '', templateTitle: '' });

    const create = async () => {
        const body = image.templateId
            ? { name: name.trim(), templateId: image.templateId }
            : { name: name.trim(), image: image.image, ...(image.tag ? { tag: image.tag } : {}) };
        await api.post<{ app: App }>('/api/apps', { ...body, ...(title.trim() ? { title: title.trim() } : {}) });
        await api.put(`/api/apps/${encodeURIComponent(name.trim())}/draft`, { step: 'sign-in' });
        navigate(`/apps/new?app=${encodeURIComponent(name.trim())}`, { replace: true });
    };

    return (
        <>
            <StepNav
                current={step}
                reachable={(id) => id === 'name' || (id === 'image' && name.trim() !== '')}
                onGo={(id) => setStep(id as 'name' | 'image')}
            />
            <section class="wizard-panel" aria-labelledby="wizard-step-heading">
                <h2 id="wizard-step-heading">{stepTitle(step)}</h2>
                {step === 'name' ? (
                    <NameStep
                        name={name}
                        title={title}
                        onChange={(patch) => {
                            if (patch.name !== undefined) {
                                setName(patch.name);
                            }

                            if (patch.title !== undefined) {
                                setTitle(patch.title);
                            }
                        }}
                        onNext={() => setStep('image')}
                    />
                ) : (
                    <ImageStep choice={image} onChange={setImage} onBack={() => setStep('name')} onCreate={create} />
                )}
            </section>
        </>
    );
}

/** The steps a draft keeps in its `step` field, resumed where the person left it. */
function ResumeWizard(props: { name: string }) {
    const path = `/api/apps/${encodeURIComponent(props.name)}`;
    const app = useApi<{ app: App }>(path);
    const [step, setStep] = useState<StepId | undefined>(undefined);
    // Accepting the lint risks is the person's answer for this deploy, not a field of the draft.
    const [acceptRisks, setAcceptRisks] = useState(false);
    const [navigationError, setNavigationError] = useState<ApiError | undefined>(undefined);

    if (!app.data) {
        return app.loading ? <Spinner label="Reading the draft…" /> : <ErrorText error={app.error} />;
    }

    const saved = STEPS.find((candidate) => candidate.id === app.data?.app.draft.step)?.id;
    // A draft just made says `image`: its image is chosen, so its first own step is the sign-in method.
    const current: StepId = step ?? (saved === undefined || saved === 'name' || saved === 'image' ? 'sign-in' : saved);
    const goTo = async (next: StepId, fields: Record<string, unknown> = {}) => {
        await api.put(`${path}/draft`, { ...fields, step: next });
        setStep(next);
        app.reload();
    };
    const jump = (next: StepId) => {
        setNavigationError(undefined);
        goTo(next).catch((failure: unknown) => setNavigationError(asApiError(failure)));
    };

    return (
        <>
            <StepNav current={current} reachable={(id) => id !== 'name' && id !== 'image'} onGo={jump} />
            <ErrorText error={navigationError} />
            <section class="wizard-panel" aria-labelledby="wizard-step-heading">
                <h2 id="wizard-step-heading">{stepTitle(current)}</h2>
                <DraftSteps
                    key={current}
                    app={app.data.app}
                    step={current}
                    goTo={goTo}
                    reload={app.reload}
                    acceptRisks={acceptRisks}
                    onAcceptRisks={setAcceptRisks}
                />
            </section>
        </>
    );
}

export function NewAppPage() {
    const location = useLocation();
    const { user } = useSession();
    const name = location.search.get('app');
    usePageTitle(name ? `Set up ${name}` : 'New app');

    if (!canEdit(user?.role)) {
        return (
            <>
                <h1>New app</h1>
                <p>
                    Only editors and administrators make apps. <Link href="/apps">Back to the apps</Link>.
                </p>
            </>
        );
    }

    return (
        <div class="wizard">
            <h1>{name ? `Set up ${name}` : 'New app'}</h1>
            {name ? <ResumeWizard key={name} name={name} /> : <StartWizard />}
        </div>
    );
}
