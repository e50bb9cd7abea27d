/** The explorer's page script (placeholder until the views land). */
document.getElementById('status')!.textContent = 'loading';
