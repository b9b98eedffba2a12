EB.hall();
