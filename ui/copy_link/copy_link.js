// The Copy link box: the link is rebuilt from window.location when shown, while open
// (the stepper changes step= without a server run) and at the click. textContent only.

function internal(name) {
  return name.startsWith("__") || name === "embed" || name === "embed_options";
}

function liveLink(origin, loc) {
  const params = new URLSearchParams(loc.search);
  for (const name of [...params.keys()]) if (internal(name)) params.delete(name);
  const query = params.toString();
  return (origin || loc.origin) + loc.pathname + (query ? "?" + query : "");
}

async function copyText(text, node) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch (e) {
    // no clipboard permission (e.g. a frame without clipboard-write): select and copy
    const range = document.createRange();
    range.selectNodeContents(node);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    try {
      return document.execCommand("copy");
    } catch (e2) {
      return false;
    }
  }
}

export default function (component) {
  const { data, parentElement } = component;
  if (!data) return;
  let box = parentElement.querySelector(".cl");
  if (!box) {
    box = document.createElement("div");
    box.className = "cl";
    const link = document.createElement("code");
    link.className = "link";
    link.setAttribute("data-testid", "cuavbCopyLinkText");
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy the link");
    const said = document.createElement("span");
    said.className = "said";
    said.setAttribute("role", "status");
    box.append(link, button, said);
    parentElement.append(box);
    button.addEventListener("click", async () => {
      const text = liveLink(box.__origin, window.location);
      link.textContent = text;
      box.setAttribute("data-copied", text);
      const ok = await copyText(text, link);
      said.textContent = ok ? "Copied." : "Select the link above and copy it.";
    });
  }
  box.__origin = data.origin || null;
  const link = box.querySelector(".link");
  link.textContent = data.fallback || "";
  const refresh = () => {
    const text = liveLink(box.__origin, window.location);
    if (link.textContent !== text) link.textContent = text;
  };
  refresh();
  clearInterval(box.__timer);
  box.__timer = setInterval(refresh, 250);
  return () => clearInterval(box.__timer);
}
