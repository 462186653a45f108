// Hearth's playground. It streams from Hearth's own API with the page's session (its cookie,
// and the page's CSRF token in x-hearth-csrf): the API key never reaches this script.
(() => {
  const root = document.querySelector(".playground");
  if (!root) return;
  const csrf = document.querySelector('meta[name="hearth-csrf"]').content;
  const model = root.dataset.model;
  const errorBox = root.querySelector(".error");
  let running = null;

  const showError = (message) => {
    errorBox.textContent = message;
    errorBox.hidden = false;
  };
  const clearError = () => {
    errorBox.hidden = true;
    errorBox.textContent = "";
  };

  const post = (path, body, signal, accept = "text/event-stream") =>
    fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", accept, "x-hearth-csrf": csrf },
      body: JSON.stringify(body),
      signal,
    });

  /** A sentence for an error answer, by status. */
  const explain = (status, message) => {
    if (status === 429) return `Too many requests are waiting for this model (429). ${message}`;
    if (status === 503) return `No worker could answer (503). ${message}`;
    return message || `The request failed (HTTP ${status}).`;
  };
  const failure = async (res) => {
    const body = await res.json().catch(() => null);
    return new Error(explain(res.status, body?.error?.message));
  };

  /** Reads server-sent events, calling onEvent(name, data) for each until [DONE] (or the event named `last`). */
  async function readEvents(res, onEvent, last) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) throw new Error("The connection ended before the answer did.");
      buffer += decoder.decode(value, { stream: true });
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let name = "message";
        const data = [];
        for (const line of frame.split("\n")) {
          if (line.startsWith("data: ")) data.push(line.slice(6));
          else if (line.startsWith("event: ")) name = line.slice(7);
        }
        if (data.length === 0) continue;
        const text = data.join("\n");
        if (text === "[DONE]") return;
        const json = JSON.parse(text);
        if (json.error) throw new Error(explain(503, json.error.message));
        onEvent(name, json);
        if (name === last) return;
      }
    }
  }

  /** Generate runs `run` (one at a time); Stop aborts it, which cancels the request on the server. */
  function wire(form, run) {
    const generate = form.querySelector(".generate");
    const stop = form.querySelector(".stop");
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      if (running) return;
      clearError();
      running = new AbortController();
      generate.disabled = true;
      stop.disabled = false;
      form.dataset.state = "running";
      try {
        await run(running.signal);
        form.dataset.state = "done";
      } catch (error) {
        form.dataset.state = error.name === "AbortError" ? "stopped" : "failed";
        if (error.name !== "AbortError") showError(error.message);
      } finally {
        running = null;
        generate.disabled = false;
        stop.disabled = true;
      }
    });
    stop.addEventListener("click", () => {
      running?.abort();
      generate.focus();
    });
  }

  /** The form's sampling fields; JSON mode asks for a JSON object. */
  const numbers = (form) => ({
    max_tokens: Number(form.elements.max_tokens.value),
    temperature: Number(form.elements.temperature.value),
    ...(form.elements.json.checked ? { response_format: { type: "json_object" } } : {}),
  });

  /** How many likely tokens each generated token shows on hover. */
  const ALTERNATIVES = 5;
  const tooltip = root.querySelector("#alternatives");
  const percent = (logprob) => `${(100 * Math.exp(logprob)).toFixed(1)}%`;

  /** Shows a token's most likely alternatives (its own row in bold) beside it. */
  const showAlternatives = (span) => {
    const { token, alternatives } = JSON.parse(span.dataset.alternatives);
    const table = document.createElement("table");
    for (const [text, logprob] of alternatives) {
      const row = table.insertRow();
      if (text === token) row.className = "chosen";
      row.insertCell().textContent = JSON.stringify(text);
      row.insertCell().textContent = percent(logprob);
    }
    tooltip.replaceChildren(table);
    const box = span.getBoundingClientRect();
    tooltip.style.left = `${box.left}px`;
    tooltip.style.top = `${box.bottom + 4}px`;
    tooltip.hidden = false;
    span.setAttribute("aria-describedby", "alternatives");
  };
  const hideAlternatives = (span) => {
    tooltip.hidden = true;
    span.removeAttribute("aria-describedby");
  };

  /**
   * Appends generated text to `into`: token by token, each a span that shows its alternatives
   * on hover or focus, when the chunk's tokens make up its text; else as plain text.
   */
  const appendTokens = (into, text, tokens) => {
    if (!tokens || tokens.map((t) => t.token).join("") !== text) {
      into.append(text);
      return;
    }
    for (const t of tokens) {
      const span = document.createElement("span");
      span.className = "token";
      span.tabIndex = -1;
      span.textContent = t.token;
      span.dataset.alternatives = JSON.stringify({ token: t.token, alternatives: t.alternatives });
      span.addEventListener("mouseenter", () => showAlternatives(span));
      span.addEventListener("mouseleave", () => hideAlternatives(span));
      span.addEventListener("focus", () => showAlternatives(span));
      span.addEventListener("blur", () => hideAlternatives(span));
      into.append(span);
    }
  };
  /** A completion chunk's tokens, from its legacy logprobs. */
  const completionTokens = (logprobs) =>
    logprobs?.tokens.map((token, i) => ({
      token,
      alternatives: Object.entries(logprobs.top_logprobs?.[i] ?? { [token]: logprobs.token_logprobs[i] }),
    }));
  /** A chat chunk's tokens, from its logprobs' content. */
  const chatTokens = (logprobs) =>
    logprobs?.content?.map((t) => ({
      token: t.token,
      alternatives: (t.top_logprobs?.length ? t.top_logprobs : [t]).map((a) => [a.token, a.logprob]),
    }));

  const completeForm = root.querySelector(".generate-form");
  if (completeForm) {
    const output = completeForm.querySelector("output");
    wire(completeForm, async (signal) => {
      output.textContent = "";
      output.focus();
      const prompt = completeForm.elements.prompt.value;
      const body = { model, prompt, ...numbers(completeForm), logprobs: ALTERNATIVES, stream: true };
      const res = await post("/v1/completions", body, signal);
      if (!res.ok) throw await failure(res);
      await readEvents(res, (_, chunk) => {
        const choice = chunk.choices[0];
        if (choice?.text) appendTokens(output, choice.text, completionTokens(choice.logprobs));
      });
    });
  }

  const chatForm = root.querySelector(".chat-form");
  if (chatForm) {
    const conversation = chatForm.querySelector(".conversation");
    const messages = [];
    const say = (role, content) => {
      const item = document.createElement("li");
      item.className = role;
      item.textContent = content;
      conversation.append(item);
      return item;
    };
    wire(chatForm, async (signal) => {
      const content = chatForm.elements.message.value;
      messages.push({ role: "user", content });
      say("user", content);
      chatForm.elements.message.value = "";
      const reply = say("assistant", "");
      const body = {
        model,
        messages,
        ...numbers(chatForm),
        logprobs: true,
        top_logprobs: ALTERNATIVES,
        stream: true,
      };
      const res = await post("/v1/chat/completions", body, signal);
      if (!res.ok) throw await failure(res);
      try {
        await readEvents(res, (_, chunk) => {
          const choice = chunk.choices[0];
          if (choice?.delta?.content) appendTokens(reply, choice.delta.content, chatTokens(choice.logprobs));
        });
      } finally {
        messages.push({ role: "assistant", content: reply.textContent });
      }
    });
  }

  const imageForm = root.querySelector(".image-form");
  if (imageForm) {
    const progress = imageForm.querySelector("progress");
    const output = imageForm.querySelector("output");
    wire(imageForm, async (signal) => {
      output.textContent = "";
      progress.hidden = false;
      progress.value = 0;
      const path = `/v1/image_generation/${model}`;
      const res = await post(path, { prompt: imageForm.elements.prompt.value, width: 512, height: 512 }, signal);
      if (!res.ok) throw await failure(res);
      await readEvents(
        res,
        (name, data) => {
          if (name === "progress") {
            progress.max = data.steps;
            progress.value = data.step;
          } else if (name === "result") {
            for (const image of data) {
              const img = document.createElement("img");
              img.src = `data:image/png;base64,${image.base64}`;
              img.alt = `Generated from the prompt (seed ${image.seed})`;
              output.append(img);
            }
          }
        },
        "result",
      );
      progress.hidden = true;
    });
  }

  // Tabs: Complete and Chat, with arrow keys between them.
  const tabs = [...root.querySelectorAll('[role="tab"]')];
  const select = (tab) => {
    for (const t of tabs) {
      const on = t === tab;
      t.setAttribute("aria-selected", String(on));
      t.tabIndex = on ? 0 : -1;
      document.getElementById(t.getAttribute("aria-controls")).hidden = !on;
    }
    tab.focus();
  };
  for (const [i, tab] of tabs.entries()) {
    tab.addEventListener("click", () => select(tab));
    tab.addEventListener("keydown", (event) => {
      if (event.key === "ArrowRight") select(tabs[(i + 1) % tabs.length]);
      if (event.key === "ArrowLeft") select(tabs[(i - 1 + tabs.length) % tabs.length]);
    });
  }
})();
